package exec

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/sase-cep/sase/event"
)

// part is a test partition: the values filed in it, and the wildcard
// values it was seeded with.
type part struct{ vals []event.Value }

func newTestPartitions(windowed bool, window int64) *partitions[part] {
	p := &partitions[part]{}
	p.init(&part{}, func(wild *part) *part { return &part{vals: slices.Clone(wild.vals)} }, windowed, window)
	return p
}

// file puts v into its partition, as an engine does with an event's value.
func file(p *partitions[part], v event.Value) *part {
	if v.IsAbsent() {
		p.wild.vals = append(p.wild.vals, v)
		for _, s := range p.all() {
			s.vals = append(s.vals, v)
		}
		return p.wild
	}
	s := p.get(v)
	if s == nil {
		s = p.create(v)
	}
	s.vals = append(s.vals, v)
	return s
}

// TestPartitionKeys checks that values that are Equal share a partition
// and others do not, on each lookup path (small ints, other ints, other
// kinds).
func TestPartitionKeys(t *testing.T) {
	i, f, s, b := event.IntValue, event.FloatValue, event.StringValue, event.BoolValue
	for _, c := range []struct {
		a, b event.Value
		same bool
	}{
		{i(2), f(2.0), true},
		{i(0), f(math.Copysign(0, -1)), true},
		{i(smallKeys), f(smallKeys), true},
		{i(-3), f(-3), true},
		{i(1 << 40), f(1 << 40), true},
		{f(2.5), f(2.5), true},
		{s("x"), s("x"), true},
		{b(true), b(true), true},
		{i(2), i(3), false},
		{i(2), f(2.5), false},
		{i(smallKeys - 1), i(smallKeys), false},
		{i(-1), i(1), false},
		{i(1), s("1"), false},
		{i(1), b(true), false},
		{s("x"), s("y"), false},
	} {
		p := newTestPartitions(false, 0)
		pa, pb := file(p, c.a), file(p, c.b)
		if got := pa == pb; got != c.same || got != c.a.Equal(c.b) {
			t.Errorf("%v (%s) and %v (%s): same partition %v, Equal %v, want %v", c.a, c.a.Kind(), c.b, c.b.Kind(), got, c.a.Equal(c.b), c.same)
		}
		if p.get(c.a) != pa || p.get(c.b) != pb {
			t.Errorf("%v, %v: get does not find what create made", c.a, c.b)
		}
	}
}

// TestPartitionWildcardSeeds checks the wildcard semantics: an absent
// value is in no partition of its own, reaches every partition, and seeds
// the partitions created after it.
func TestPartitionWildcardSeeds(t *testing.T) {
	p := newTestPartitions(false, 0)
	absent := event.Value{}
	file(p, event.IntValue(1))
	file(p, absent)
	file(p, event.StringValue("a"))
	if p.get(absent) != nil {
		t.Error("an absent value has a partition")
	}
	for _, c := range []struct {
		v    event.Value
		want int // values in its partition
	}{{event.IntValue(1), 2}, {event.StringValue("a"), 2}} {
		if got := len(p.get(c.v).vals); got != c.want {
			t.Errorf("partition %v holds %d values, want %d", c.v, got, c.want)
		}
	}
	if n := len(p.wild.vals); n != 1 {
		t.Errorf("wild holds %d values, want 1", n)
	}
}

// TestPartitionSweep checks that a sweep drops exactly the partitions keep
// rejects, keeps the others in creation order, and that a dropped key
// starts afresh (from wild) when it comes back.
func TestPartitionSweep(t *testing.T) {
	p := newTestPartitions(true, 10)
	keys := []event.Value{event.IntValue(5), event.IntValue(smallKeys + 7), event.StringValue("s"), event.IntValue(6), event.FloatValue(0.5)}
	for _, k := range keys {
		file(p, k)
		file(p, k)
	}
	drop := map[event.Key]bool{keys[0].Key(): true, keys[1].Key(): true, keys[2].Key(): true}
	p.sweep(func(s *part) bool { return !drop[s.vals[0].Key()] })
	var order []event.Value
	for _, s := range p.all() {
		order = append(order, s.vals[0])
	}
	if want := []event.Value{keys[3], keys[4]}; !slices.EqualFunc(order, want, event.Value.Identical) {
		t.Errorf("after the sweep: %v, want %v", order, want)
	}
	for _, k := range keys {
		if got := p.get(k) != nil; got == drop[k.Key()] {
			t.Errorf("%v: found %v after the sweep", k, got)
		}
	}
	if s := file(p, keys[1]); len(s.vals) != 1 || len(p.all()) != 3 {
		t.Errorf("a swept key comes back with %d values, %d partitions", len(s.vals), len(p.all()))
	}
}

// TestPartitionReuse checks that, with reuse, a sweep keeps the
// partitions it drops (at most maxFree) and create makes new ones of
// them, seeded from wild by reuse, before it seeds fresh ones.
func TestPartitionReuse(t *testing.T) {
	p := newTestPartitions(true, 10)
	p.reuse = func(wild, s *part) { s.vals = append(s.vals, wild.vals...) }
	dropped := map[*part]bool{}
	for i := range maxFree + 10 {
		dropped[file(p, event.IntValue(int64(i)))] = true
	}
	p.sweep(func(s *part) bool {
		s.vals = s.vals[:0] // released, as keep does when it drops one
		return false
	})
	if len(p.all()) != 0 || len(p.free) != maxFree {
		t.Fatalf("after the sweep: %d partitions, %d kept for reuse, want 0 and %d", len(p.all()), len(p.free), maxFree)
	}
	var wild event.Value // absent: every partition's
	file(p, wild)
	for i := range maxFree + 1 {
		k := event.IntValue(int64(-1 - i))
		s := file(p, k)
		if want := []event.Value{wild, k}; !slices.EqualFunc(s.vals, want, event.Value.Identical) {
			t.Fatalf("new partition %d holds %v, want %v", i, s.vals, want)
		}
		if reused := dropped[s]; reused != (i < maxFree) {
			t.Fatalf("new partition %d: reused %v, with %d kept", i, reused, maxFree)
		}
	}
}

// TestPartitionSweepDue checks the sweep schedule: at the first event,
// then once per window of stream time, never without a window.
func TestPartitionSweepDue(t *testing.T) {
	for _, c := range []struct {
		windowed bool
		window   int64
		times    []int64
		want     string
	}{
		{true, 10, []int64{0, 5, 9, 10, 15, 19, 20, 45, 50, 55}, "0 10 20 45 55"},
		{true, 0, []int64{3, 3, 4, 4, 6}, "3 4 6"},
		{true, 5, []int64{math.MaxInt64 - 2, math.MaxInt64 - 1, math.MaxInt64}, fmt.Sprint(int64(math.MaxInt64-2), " ", int64(math.MaxInt64))}, // no wrap-around
		{false, 10, []int64{0, 10, 100}, ""},
	} {
		p := newTestPartitions(c.windowed, c.window)
		var got []int64
		for _, ts := range c.times {
			if p.sweepDue(ts) {
				got = append(got, ts)
			}
		}
		if s := fmt.Sprint(got); s != "["+c.want+"]" {
			t.Errorf("window %d (windowed %v): sweeps at %v, want [%s]", c.window, c.windowed, got, c.want)
		}
	}
}

// BenchmarkPartitionsGet times a lookup on each path: small ints (by
// index), other ints (int map), strings (value map).
func BenchmarkPartitionsGet(b *testing.B) {
	for _, c := range []struct {
		name string
		key  func(i int) event.Value
	}{
		{"small-int", func(i int) event.Value { return event.IntValue(int64(i)) }},
		{"int", func(i int) event.Value { return event.IntValue(int64(smallKeys + i)) }},
		{"string", func(i int) event.Value { return event.StringValue(fmt.Sprintf("sym%d", i)) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := newTestPartitions(false, 0)
			keys := make([]event.Value, 1000)
			for i := range keys {
				keys[i] = c.key(i * 7 % 1000)
				p.create(keys[i])
			}
			for b.Loop() {
				for _, k := range keys {
					if p.get(k) == nil {
						b.Fatal("lost a key")
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/get")
		})
	}
}
