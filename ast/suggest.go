package ast

import (
	"slices"
	"strings"
)

// Closest returns the candidates that word is likely a typo of, nearest
// first: those within a small edit distance, compared case-insensitively
// (so Stock1 finds stock1 at distance 0), where swapping two neighbouring
// letters counts as one edit (SQE finds SEQ). Messages use it for "did you
// mean": a keyword, a statement, a unit, a name.
func Closest(word string, candidates []string) []string {
	w := strings.ToLower(word)
	limit := maxTypos(len([]rune(w)))
	type near struct {
		cand string
		d    int
	}
	var found []near
	for _, c := range candidates {
		if d := editDistance(w, strings.ToLower(c)); d <= limit && !slices.ContainsFunc(found, func(n near) bool { return n.cand == c }) {
			found = append(found, near{c, d})
		}
	}
	slices.SortStableFunc(found, func(a, b near) int { return a.d - b.d })
	out := make([]string, len(found))
	for i, n := range found {
		out[i] = n.cand
	}
	return out
}

// maxTypos is how many edits a word of n letters may hold and still be
// taken for a typo: none in a word of one letter, where any other letter
// is as likely.
func maxTypos(n int) int {
	switch {
	case n < 2:
		return 0
	case n <= 5:
		return 1
	}
	return 2
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and transpositions of neighbours.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	// rows i-2, i-1 and i of the dynamic program
	prev2, prev, cur := make([]int, len(y)+1), make([]int, len(y)+1), make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(y)]
}

// DidYouMean is "; did you mean X?" for the candidate word is most likely a
// typo of, or "" when none is near: the tail of a message about an unknown
// name.
func DidYouMean(word string, candidates []string) string {
	return didYouMean(word, candidates, func(c string) string { return c })
}

// DidYouMeanAttr is DidYouMean for an attribute name, written as a query
// takes it (QuoteAttr): geo.country, geo.`zip-code`.
func DidYouMeanAttr(word string, candidates []string) string {
	return didYouMean(word, candidates, QuoteAttr)
}

func didYouMean(word string, candidates []string, write func(string) string) string {
	for _, c := range Closest(word, candidates) {
		if c != word {
			return "; did you mean " + write(c) + "?"
		}
	}
	return ""
}
