package grammar

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/grammar/gen"
)

// Every token the parser can expect has a word for messages: a keyword, a
// literal, or a phrase in tokenWords. A token added to Sase.g4 without one
// fails here.
func TestEveryTokenHasAWord(t *testing.T) {
	p := newParser("")
	skipped := []string{"LINE_COMMENT", "BLOCK_COMMENT", "WS"} // never reach the parser
	for tt, name := range p.GetSymbolicNames() {
		if tt == 0 || slices.Contains(skipped, name) {
			continue
		}
		if strings.HasPrefix(name, "UNTERMINATED_") {
			if unterminated[tt] == "" {
				t.Errorf("%s has no message in unterminated", name)
			}
			continue
		}
		if w := tokenWord(p, tt); w == name && vocab().keywords[tt] == "" {
			t.Errorf("token %s has no word for messages (add it to tokenWords)", name)
		}
	}
}

// The statement keywords are those that start the statements of the
// canonical corpus, which has one of each form.
func TestStatementsAgreeWithCorpus(t *testing.T) {
	var starts []string
	for _, src := range canonical {
		if w := strings.Fields(src)[0]; !slices.Contains(starts, w) {
			starts = append(starts, w)
		}
	}
	p := newParser("")
	var words []string
	for _, tt := range vocab().statement.sorted() {
		words = append(words, tokenWord(p, tt))
	}
	slices.Sort(starts)
	slices.Sort(words)
	if !slices.Equal(starts, words) {
		t.Errorf("statements start with %q; the grammar's statement keywords are %q", starts, words)
	}
}

// Every spelling of every unit is a plain identifier that WITHIN accepts,
// in any case, as that unit; none is a keyword.
func TestUnitsAgreeWithGrammar(t *testing.T) {
	for _, u := range event.TimeUnits() {
		for _, w := range append([]string{u.Name}, u.Aliases...) {
			if lexOne(w) != gen.SaseLexerID || ast.IsKeyword(w) {
				t.Errorf("unit %q does not lex as a name", w)
			}
			for _, spelled := range []string{w, strings.ToUpper(w)} {
				q, err := ParseQuery(&ast.Source{Text: "PATTERN A a WITHIN 2 " + spelled})
				if err != nil {
					t.Errorf("WITHIN 2 %s: %v", spelled, err)
					continue
				}
				if q.Within.Unit != u.Name {
					t.Errorf("WITHIN 2 %s: unit %q, want %q", spelled, q.Within.Unit, u.Name)
				}
			}
		}
	}
}

// Every name of a built-in attribute reads that attribute after a '.' and
// in an equivalence test, and prints back as itself (seq is also a keyword,
// printed in backquotes).
func TestBuiltinsAgreeWithGrammar(t *testing.T) {
	for _, b := range event.BuiltinAttrs() {
		for _, w := range append([]string{b.Name}, b.Aliases...) {
			src := "PATTERN SEQ(A a, B c) WHERE a." + w + " < c." + w + " AND [" + w + "]"
			q, err := ParseQuery(&ast.Source{Text: src})
			if err != nil {
				t.Errorf("%s: %v", src, err)
				continue
			}
			again, err := ParseQuery(&ast.Source{Text: q.String()})
			if err != nil {
				t.Errorf("%s printed as %s: %v", src, q, err)
				continue
			}
			var names []string
			ast.Inspect(again.Where, func(e ast.Expr) bool {
				switch e := e.(type) {
				case *ast.AttrRef:
					names = append(names, e.Attr.Name)
				case *ast.Equivalence:
					for _, a := range e.Attrs {
						names = append(names, a.Attr.Name)
					}
				}
				return true
			})
			if !slices.Equal(names, []string{w, w, w}) {
				t.Errorf("%s reads attributes %q", src, names)
			}
		}
	}
}

var listed = regexp.MustCompile(`^expected (?:a statement \((.*)\)|(.*)) (?:at|after) `)

// The words of an "expected ..." message stand for exactly the tokens the
// parser expected there: nothing left out, nothing extra.
func TestMessagesListWhatTheGrammarAccepts(t *testing.T) {
	v := vocab()
	p := newParser("")
	classes := map[string][]tokenSet{
		"an expression":       {v.expr},
		"a pattern":           {v.pattern},
		"a pattern component": {v.component},
		"a name":              {v.word, v.name},
	}
	// A token's word stands for it, or for every token of that word (INT
	// and FLOAT are "a number").
	single := map[string]tokenSet{}
	for tt := -1; tt < len(p.GetSymbolicNames()); tt++ {
		w := tokenWord(p, tt)
		if single[w] == nil {
			single[w] = tokenSet{}
		}
		single[w][tt] = true
		classes[w] = append(classes[w], tokenSet{tt: true})
	}
	for w, set := range single {
		classes[w] = append(classes[w], set)
	}
	for _, src := range []string{
		"USE ;", "DESCRIBE ;", ") ;", "SHOW", "SHOW TYPES FROM", "EXPLAIN SHOW", "GENERATE", "STOP", "LISTEN",
		"SET = 1", "SET limit 5", "LOAD 'x' FORMAT 5", "LOAD 'x' WITH (a=1", "LOAD 'x' WITH a",
		"PATTERN", "PATTERN SEQ(A a,", "PATTERN SEQ(A a B b)", "PATTERN A a WHERE", "PATTERN A a WITHIN",
		"PATTERN A a WHERE (a.x = 1", "PATTERN A a WHERE a.x >", "PATTERN A a RETURN", "PATTERN SEQ(A+ a[), B b)",
		"PATTERN A a RETURN a.x INTO",
	} {
		_, err := Parse(&ast.Source{Text: src})
		if err == nil {
			t.Errorf("%q: no error", src)
			continue
		}
		msg := err.(ast.ErrorList)[0].Msg
		m := listed.FindStringSubmatch(msg)
		if m == nil {
			t.Errorf("%q: %q lists nothing", src, msg)
			continue
		}
		var want tokenSet
		if l := newParser(src); true {
			fe := &firstError{}
			l.AddErrorListener(fe)
			l.Script()
			want = fe.expected
		}
		list := m[2]
		if m[1] != "" {
			list = m[1]
			// Before a statement, an empty one is fine too.
			delete(want, gen.SaseParserSEMI)
			delete(want, -1)
		}
		got := tokenSet{}
		for _, w := range regexp.MustCompile(`, | or `).Split(list, -1) {
			// A class word stands for the largest of its sets the parser
			// expected.
			var best tokenSet
			for _, set := range classes[w] {
				if want.covers(set) && len(set) > len(best) {
					best = set
				}
			}
			if best == nil {
				t.Errorf("%q: %q lists %q, which the parser does not expect there", src, msg, w)
			}
			for tt := range best {
				got[tt] = true
			}
		}
		if len(got) != len(want) || !got.covers(want) {
			t.Errorf("%q: %q stands for %v; the parser expects %v", src, msg, got.words(p), want.words(p))
		}
	}
}
