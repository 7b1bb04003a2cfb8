package repl

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/query"
	"github.com/sase-cep/sase/session"
)

// Tab completion. What fits where is package grammar's to say
// (query.Syntax's Complete asks the parser); the shell finds the names of
// each kind in the session: streams, types, attributes, settings, queries
// and files. File names complete inside LOAD '...' and after \i and \o.

// Complete returns the completions of the word that ends text, the shell's
// pending input and the line being edited up to the cursor: the word and
// the candidates, each of which begins with it.
func Complete(s *session.Session, text string) (word string, candidates []string) {
	c, err := query.Registered()
	if err != nil {
		return "", nil // no compiler, no statement to complete
	}
	pieces := c.Split(text)
	stmt := ""
	if n := len(pieces); n > 0 && pieces[n-1].End == len(text) {
		last := pieces[n-1]
		switch last.Kind {
		case query.Command:
			return completeCommand(s, text[last.Start:])
		case query.OpenComment:
			return "", nil
		}
		stmt = text[last.Start:]
	}
	ctx := c.Complete(stmt)
	if ctx.Expect&query.ExpectPath != 0 {
		return completePath(ctx.Word, "'")
	}
	cp := completer{s: s, ctx: &ctx}
	return ctx.Word, cp.candidates()
}

// completer finds the names that fit where ctx says.
type completer struct {
	s     *session.Session
	ctx   *query.Completion
	names []string
}

func (c *completer) candidates() []string {
	ctx := c.ctx
	if ctx.Expect&query.ExpectStream != 0 {
		for _, st := range c.s.Streams() {
			c.ident(st.Name, " ")
		}
	}
	if ctx.Expect&query.ExpectType != 0 {
		if sc := c.s.Schema(ctx.Stream); sc != nil {
			for _, t := range sc.Types {
				c.ident(t.Name, " ")
			}
		}
	}
	if ctx.Expect&query.ExpectVariable != 0 {
		for _, v := range ctx.Vars {
			c.ident(v.Name, "")
		}
	}
	if ctx.Expect&query.ExpectAttribute != 0 {
		c.attributes()
	}
	if ctx.Expect&query.ExpectStreamAttribute != 0 {
		if sc := c.s.Schema(ctx.Stream); sc != nil {
			for _, a := range sc.Attrs {
				c.ident(a, "")
			}
		}
	}
	if ctx.Expect&query.ExpectSetting != 0 {
		for _, k := range session.SettingKeys() {
			c.name(k, " ")
		}
	}
	if ctx.Expect&query.ExpectSettingValue != 0 {
		for _, v := range session.SettingValues(ctx.Key) {
			c.name(v, "")
		}
	}
	if ctx.Expect&query.ExpectQueryID != 0 {
		for _, q := range c.s.Queries() {
			if q.State == session.Running {
				c.name(strconv.Itoa(q.ID), " ")
			}
		}
	}
	for _, v := range ctx.Values {
		c.name(v, " ")
	}
	words := make([]string, len(ctx.Keywords))
	for i, kw := range ctx.Keywords {
		words[i] = kw + " "
		if slices.Contains(ctx.Opens, kw) {
			words[i] = kw + "("
		}
	}
	slices.Sort(c.names)
	slices.Sort(words)
	return slices.Compact(append(c.names, words...))
}

// name adds a name candidate if it begins with the word (names are case
// sensitive), followed by suffix.
func (c *completer) name(n, suffix string) {
	if strings.HasPrefix(n, c.ctx.Word) {
		c.names = append(c.names, n+suffix)
	}
}

// ident adds a name the query names (a stream, type, variable or
// attribute; a nested key's dotted name) as it must be written: in
// backquotes where a part of it is not a plain identifier (so 城市 is
// offered once a backquote, or nothing, is typed: readline can only
// append to the word), and wherever the word opens them. A keyword stays
// bare, as the grammar takes it as a name where a name fits.
func (c *completer) ident(n, suffix string) {
	if strings.HasPrefix(c.ctx.Word, "`") || slices.ContainsFunc(strings.Split(n, "."), func(p string) bool { return !ast.IsPlainIdent(p) }) {
		n = "`" + strings.ReplaceAll(n, "`", "``") + "`"
	}
	c.name(n, suffix)
}

// attributes adds the attributes of the variable's types, and LEN for a
// closure's variable.
func (c *completer) attributes() {
	sc := c.s.Schema(c.ctx.Stream)
	for _, v := range c.ctx.Vars {
		if v.Name != c.ctx.Var {
			continue
		}
		if sc != nil {
			for _, t := range v.Types {
				for _, a := range session.Attributes(sc, t) {
					c.ident(a, " ")
				}
			}
		}
		if kw, ok := c.ctx.Keyword("LEN"); ok && v.Closure {
			c.names = append(c.names, kw+" ")
		}
	}
}

// ---- backslash commands and files ----

// completeCommand completes a backslash command line: the command's name,
// then its argument.
func completeCommand(s *session.Session, line string) (string, []string) {
	name, arg, spaced := strings.Cut(line, " ")
	if !spaced {
		var cands []string
		for _, c := range session.Commands() {
			if strings.HasPrefix(c, name) {
				cands = append(cands, c+" ")
			}
		}
		slices.Sort(cands)
		return name, cands
	}
	arg = strings.TrimLeft(arg, " ")
	switch name {
	case `\i`, `\include`, `\o`, `\out`:
		if strings.HasPrefix(arg, "'") || strings.HasPrefix(arg, `"`) {
			return completePath(arg[1:], arg[:1])
		}
		return completePath(arg, "")
	case `\x`, `\timing`:
		return completeWords(arg, []string{"on", "off"})
	case `\set`:
		key, value, spaced := strings.Cut(arg, " ")
		if !spaced {
			return completeWords(key, session.SettingKeys())
		}
		return completeWords(strings.TrimLeft(value, " "), session.SettingValues(key))
	}
	return arg, nil
}

func completeWords(word string, words []string) (string, []string) {
	var cands []string
	for _, w := range words {
		if strings.HasPrefix(w, word) {
			cands = append(cands, w)
		}
	}
	slices.Sort(cands)
	return word, cands
}

// completePath completes a file name: the entries of its folder that
// begin with its last element, a folder followed by "/", a file by
// closing (the quote that ends a LOAD path). Hidden files are offered
// once a "." is typed.
func completePath(partial, closing string) (string, []string) {
	dir, base := filepath.Split(partial)
	entries, err := os.ReadDir(cmpDir(dir))
	if err != nil {
		return partial, nil
	}
	var cands []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base) || strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".") {
			continue
		}
		if isDir(filepath.Join(cmpDir(dir), name), e) {
			cands = append(cands, dir+name+"/")
		} else {
			cands = append(cands, dir+name+closing)
		}
	}
	return partial, cands
}

func cmpDir(dir string) string {
	if dir == "" {
		return "."
	}
	return dir
}

// isDir reports whether an entry is a folder, following a symbolic link.
func isDir(path string, e os.DirEntry) bool {
	if e.Type()&os.ModeSymlink == 0 {
		return e.IsDir()
	}
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

// ---- readline ----

// autoComplete adapts Complete to readline, which wants the candidates'
// remainders after the word, and the word's length in runes.
type autoComplete struct{ sh *Shell }

func (a autoComplete) Do(line []rune, pos int) ([][]rune, int) {
	text := a.sh.pending.String() + string(line[:pos])
	word, cands := Complete(a.sh.s, text)
	out := make([][]rune, len(cands))
	for i, c := range cands {
		out[i] = []rune(c[len(word):])
	}
	return out, utf8.RuneCountInString(word)
}
