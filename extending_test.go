package sase_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// declared lists what the package in dir declares at top level, without
// its tests: functions, types, variables and constants by name, methods as
// Type.Method.
func declared(t *testing.T, dir string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					names[d.Name.Name] = true
					continue
				}
				recv := d.Recv.List[0].Type
				if star, ok := recv.(*ast.StarExpr); ok {
					recv = star.X
				}
				if id, ok := recv.(*ast.Ident); ok {
					names[id.Name+"."+d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						names[s.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names[n.Name] = true
						}
					}
				}
			}
		}
	}
	return names
}

// The table of docs/EXTENDING.md ("to add X, touch these files") must stay
// true: every file it quotes exists, and every package.Name (or
// package.Type.Method) it quotes is declared in that package.
func TestExtendingTable(t *testing.T) {
	doc, err := os.ReadFile("docs/EXTENDING.md")
	if err != nil {
		t.Fatal(err)
	}
	quoted := regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(string(doc), -1)
	packages := map[string]map[string]bool{}
	files, symbols := 0, 0
	for _, m := range quoted {
		q := m[1]
		switch {
		case regexp.MustCompile(`^[\w./-]+/[\w.-]+\.(go|g4|sh|md)$`).MatchString(q):
			files++
			if _, err := os.Stat(q); err != nil {
				t.Errorf("docs/EXTENDING.md quotes %s: %v", q, err)
			}
		case regexp.MustCompile(`^[a-z]+(\.[A-Za-z]+)+$`).MatchString(q):
			pkg, name, _ := strings.Cut(q, ".")
			dir := pkg
			if pkg == "sase" {
				dir = "."
			}
			if _, err := os.Stat(dir); err != nil {
				continue // not a package of ours
			}
			if packages[dir] == nil {
				packages[dir] = declared(t, dir)
			}
			symbols++
			if !packages[dir][name] {
				t.Errorf("docs/EXTENDING.md quotes %s: package %s declares no %s", q, pkg, name)
			}
		}
	}
	if files < 10 || symbols < 10 {
		t.Errorf("found %d files and %d package names in docs/EXTENDING.md: the table's quoting changed?", files, symbols)
	}
}
