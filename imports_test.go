package sase_test

import (
	"go/build"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/sase-cep/sase"

// The session and the shell reach the parser and the planner only through
// the facade (package sase) and package syntax, the parser's surface for
// the shell's text: neither they nor a package they import on the way
// names planner or grammar. (go list -deps lists both, below the facade.)
// rowpattern, the MATCH_RECOGNIZE engine, is an engine beside exec that
// the facade does not compile yet.
func TestSessionAndShellImportNoCompilerInternals(t *testing.T) {
	doors := map[string]bool{module: true, module + "/syntax": true, module + "/rowpattern": true}
	banned := map[string]bool{module + "/planner": true, module + "/grammar": true}
	seen := map[string]bool{}
	var walk func(path string, via []string)
	walk = func(path string, via []string) {
		if seen[path] || doors[path] {
			return
		}
		seen[path] = true
		pkg, err := build.Default.ImportDir(filepath.FromSlash("."+strings.TrimPrefix(path, module)), 0)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		via = append(via, path)
		for _, imp := range pkg.Imports {
			switch {
			case banned[imp]:
				t.Errorf("%s imports %s", strings.Join(via, " -> "), imp)
			case imp == module || strings.HasPrefix(imp, module+"/"):
				walk(imp, via)
			}
		}
	}
	for _, p := range []string{"session", "repl"} {
		walk(module+"/"+p, nil)
	}
}
