package sase_test

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/sase-cep/sase"

// imports lists the packages of this module that the package in dir
// (relative to the module's root) imports, without its tests', as paths
// relative to the root ("" is the facade).
func imports(t *testing.T, dir string) []string {
	t.Helper()
	pkg, err := build.Default.ImportDir(filepath.Join(".", filepath.FromSlash(dir)), 0)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	var out []string
	for _, imp := range pkg.Imports {
		if imp == module || strings.HasPrefix(imp, module+"/") {
			out = append(out, strings.TrimPrefix(strings.TrimPrefix(imp, module), "/"))
		}
	}
	return out
}

// The session and the shell reach the compiler only through package
// query's interfaces, which package compiler implements (and cmd/sase
// links in): nothing they import, however indirectly, is the parser, the
// planner, the optimizer or an engine.
func TestSessionAndShellReachNoCompilerInternals(t *testing.T) {
	for _, dir := range []string{"session", "repl"} {
		reachesNone(t, dir, "grammar", "planner", "optimizer", "exec")
	}
}

// internal/bench runs the suites, and is given a chart drawer by cmd/sase:
// the tests that import it (the engines', natsio's, serve's) link no
// plotting library, which is ~80 packages of their binaries.
func TestBenchDrawsNoCharts(t *testing.T) {
	reachesNone(t, "internal/bench", "internal/chart/svg")
}

// reachesNone fails t for each of bad that the package in dir imports,
// however indirectly, with the path of imports.
func reachesNone(t *testing.T, dir string, bad ...string) {
	t.Helper()
	// via[p] is the package that imports p on the first path found.
	via := map[string]string{dir: dir}
	for queue := []string{dir}; len(queue) > 0; queue = queue[1:] {
		for _, imp := range imports(t, queue[0]) {
			if _, seen := via[imp]; !seen {
				via[imp] = queue[0]
				queue = append(queue, imp)
			}
		}
	}
	for _, b := range bad {
		if _, ok := via[b]; !ok {
			continue
		}
		path := []string{b}
		for p := b; p != dir; {
			p = via[p]
			path = append([]string{p}, path...)
		}
		t.Errorf("%s reaches %s: %s", dir, b, strings.Join(path, " -> "))
	}
}

// layers are the module's packages bottom up: a package imports only
// packages of layers below its own (README.md, More).
var layers = [][]string{
	{"minheap", "event", "grammar/gen", "natsio/natsserver", "internal/chart", "internal/testkit"},
	{"ast", "internal/chart/svg"},
	{"query"},
	{"grammar"},
	{"planner"},
	{"optimizer", "rowpattern"},
	{"exec", "source"},
	{"", "syntax"},
	{"output", "derive", "rulebook", "internal/teststream", "internal/randquery"},
	{"job", "compiler", "internal/bench"},
	{"session", "internal/recepbench"},
	{"natsio", "repl", "serve"},
	{"cmd/sase"},
}

// Imports point down the layers only. A package with no layer here yet
// (one a branch adds) is left out, and named in the log.
func TestImportsPointDown(t *testing.T) {
	layer := map[string]int{}
	for i, l := range layers {
		for _, p := range l {
			layer[p] = i
		}
	}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata") {
			return filepath.SkipDir
		}
		if files, _ := filepath.Glob(filepath.Join(path, "*.go")); !slices.ContainsFunc(files, func(f string) bool { return !strings.HasSuffix(f, "_test.go") }) {
			return nil
		}
		dir := filepath.ToSlash(path)
		if dir == "." {
			dir = ""
		}
		from, ok := layer[dir]
		if !ok {
			t.Logf("package %q has no layer in TestImportsPointDown's table", dir)
			return nil
		}
		for _, imp := range imports(t, dir) {
			if to, ok := layer[imp]; ok && to >= from {
				t.Errorf("%q (layer %d) imports %q (layer %d): an arrow up or across", dir, from, imp, to)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
