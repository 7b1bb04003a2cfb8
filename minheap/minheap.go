// Package minheap is a binary min-heap over a slice of values ordered by
// their Less method. container/heap would box each element in an
// interface; a type parameter keeps them unboxed. It imports nothing, so
// that every layer that orders things by time (exec, source, derive)
// imports it downward.
package minheap

// Heap holds its elements in a slice; the zero value is empty.
type Heap[T interface{ Less(T) bool }] struct{ items []T }

// Len is the number of elements.
func (h *Heap[T]) Len() int { return len(h.items) }

// Min is the least element; h must not be empty.
func (h *Heap[T]) Min() T { return h.items[0] }

// Push adds x.
func (h *Heap[T]) Push(x T) {
	s := append(h.items, x)
	for i := len(s) - 1; i > 0; {
		up := (i - 1) / 2
		if !s[i].Less(s[up]) {
			break
		}
		s[i], s[up] = s[up], s[i]
		i = up
	}
	h.items = s
}

// Pop removes and returns the least element; h must not be empty. The
// slot it leaves is zeroed, so the heap keeps no reference to it.
func (h *Heap[T]) Pop() T {
	s := h.items
	top := s[0]
	last := len(s) - 1
	var zero T
	s[0], s[last] = s[last], zero
	s = s[:last]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(s) && s[l].Less(s[m]) {
			m = l
		}
		if r := l + 1; r < len(s) && s[r].Less(s[m]) {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	h.items = s
	return top
}
