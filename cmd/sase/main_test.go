package main_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sase-cep/sase/internal/testkit"
)

// sase is the binary under test, installed once by TestMain in gopath
// (whose module cache is gomodcache, the go command's).
var sase, gopath, gomodcache string

func TestMain(m *testing.M) {
	// Every test runs sase processes of its own and mostly waits on them,
	// and the README's test waits on its session for most of the run:
	// two more run at once than GOMAXPROCS, unless -parallel says.
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(runtime.GOMAXPROCS(0)+2))
	}
	// go install, into the GOPATH the README's session gets: its own
	// `go install ./cmd/sase` then finds the binary up to date and links
	// nothing (a link is seconds of the package's CPU). The GOPATH is
	// this clone's and outlives the run, so that a later run whose sase
	// has not changed links nothing either.
	var err error
	gopath, err = testGopath()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sase = filepath.Join(gopath, "bin", "sase")
	modcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "go env:", err)
		os.Exit(1)
	}
	gomodcache = strings.TrimSpace(string(modcache))
	build := exec.Command("go", "install", ".")
	build.Env = append(os.Environ(), "GOPATH="+gopath, "GOBIN=", "GOMODCACHE="+gomodcache)
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	// The README's first block runs `go run ./cmd/sase`, whose binary
	// the go command keeps in its cache: linked meanwhile (-exec true runs
	// nothing), it is there when the block runs, rather than linked then,
	// with the session waiting.
	var goRun *exec.Cmd
	readme := readmeSelected()
	if readme {
		goRun = exec.Command("go", "run", "-exec", "true", ".")
		goRun.Env = build.Env
		goRun.Stdout, goRun.Stderr = os.Stdout, os.Stderr
		goRun.Start() // (if it fails, the block fails with the reason)
	}
	// go install touches an up-to-date binary: its sum, not its time,
	// tells whether it linked a new one.
	before := fileSum(sase)
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building sase:", err)
		os.Exit(1)
	}
	if readme {
		goRun.Wait()
		readmeStarted = startReadme(before == nil || !bytes.Equal(before, fileSum(sase)))
	}
	code := m.Run()
	if readmeStarted != nil {
		readmeStarted.stop() // TestReadmeRunsItself did not run
	}
	os.Exit(code)
}

// fileSum is the SHA-256 of a file's bytes; nil if it cannot be read.
func fileSum(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil
	}
	return h.Sum(nil)
}

// testGopath is the GOPATH (only its bin: the module cache is the go
// command's) that the tests install sase into: under the user's cache,
// one per clone, so that two clones' runs do not install over each
// other's binaries.
func testGopath() (string, error) {
	root, err := filepath.Abs("../..")
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(cache, "sase-test", hex.EncodeToString(sum[:8]))
	return dir, os.MkdirAll(dir, 0o755)
}

type result struct {
	stdout, stderr string
	code           int
}

// run runs sase from the module root (scripts name files from there) with
// stdin, which is never a terminal here.
func run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(sase, args...)
	cmd.Dir = "../.."
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{stdout.String(), stderr.String(), code}
}

// TestJSONLMatchesSummary checks the output contract end to end: one JSON
// object per match, keyed by the pattern's variables, as many as the
// summary on stderr counts.
func TestJSONLMatchesSummary(t *testing.T) {
	t.Parallel()
	r := run(t, "", "--format", "jsonl", "-c",
		"GENERATE STOCKS WITH (events = 1000); PATTERN SEQ(stock1 a, stock2 b, stock3 c) WITHIN 120;")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	m := regexp.MustCompile(`\((\d+) matches, 1000 events on stocks, [^)]*events/s\)`).FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("no summary in stderr:\n%s", r.stderr)
	}
	want, _ := strconv.Atoi(m[1])
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if want == 0 || len(lines) != want {
		t.Fatalf("%d lines, summary says %d", len(lines), want)
	}
	for _, line := range lines {
		var obj map[string]map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if len(obj) != 3 || obj["a"]["type"] != "stock1" || obj["b"]["type"] != "stock2" || obj["c"]["type"] != "stock3" {
			t.Fatalf("keys of %q", line)
		}
	}
}

func TestGenStocks(t *testing.T) {
	t.Parallel()
	r := run(t, "", "gen", "stocks", "--events", "3")
	want := "type,ts,id,symbol,price,volume\nstock9,0,0,9,12,156\nstock4,1,1,4,8,741\nstock4,2,2,4,94,108\n"
	if r.code != 0 || r.stdout != want || r.stderr != "" {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, "", "gen", "stocks", "--events", "2", "--symbols", "3", "--increase-probability", "50", "--seed", "5", "--max-volume", "10", "--max-price", "7")
	if r.code != 0 || strings.Count(r.stdout, "\nstock,") != 2 {
		t.Errorf("random walk: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestRun checks statements from -c, -f and stdin, and exit statuses.
func TestRun(t *testing.T) {
	t.Parallel() // its own files, ports and servers: it overlaps the README's waits
	tests := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stdout string // exact (a prefix with prefix set), unless golden is set
		prefix bool
		stderr string // a substring
		golden string // compare stdout and stderr with testdata/cli/<golden>
	}{
		{name: "script", args: []string{"-f", "testdata/cli/tour.sase"}, code: 1, golden: "tour.golden"},
		{name: "script and commands in order", args: []string{"-c", `\timing off`, "-f", "testdata/cli/ok.sase", "-c", "SET format = csv; SHOW STREAMS"},
			stdout: `{"a.seq":4930,"b.seq":4932}` + "\n" + `{"a.seq":8257,"b.seq":8262}` + "\n" +
				"name,events,types,source,time_unit,current,live,slack,time,max_ts,late\nstocks,10000,10,generated,,true,false,,,,\n",
			stderr: "timing is off\ntiming is off\nformat = jsonl\n(2 matches, 10000 events on stocks)\nformat = csv\n"},
		{name: "statements on stdin", stdin: "SET format = csv;\nSHOW\n  STREAMS;\nUSE nothing;\nSHOW TYPES",
			code: 1, prefix: true, stdout: "name,events,types,source,time_unit,current,live,slack,time,max_ts,late\nstocks,10000,10,generated,,true,false,,,,\ntype,count,attributes\nstock1,937,",
			stderr: "ERROR: <stdin>:4:5: no stream named nothing (streams: stocks)\n    USE nothing;\n        ^\n"},
		{name: "LOAD from stdin", stdin: "type,ts,x\nA,1,5\nB,2,6\n", args: []string{"--format", "jsonl", "-c", "LOAD '-' AS t; PATTERN SEQ(A a, B b) WITHIN 5 RETURN a.x + b.x AS sum"},
			stdout: "{\"sum\":11}\n", stderr: "(stream t ended: 2 lines read, 2 events used, 0 late, 0 lines rejected)"},
		{name: "count format", args: []string{"--format", "count", "-c", "PATTERN SEQ(stock1 a, stock2 b, stock3 c) WITHIN 20; SET limit = 5; PATTERN stock1 a"},
			stdout: "1707\n5\n", stderr: "(1707 matches, 10000 events"},
		{name: "limit flag", args: []string{"--limit", "2", "--format", "csv", "-c", "PATTERN stock1 a RETURN a.seq"},
			stdout: "a.seq\n17\n33\n", stderr: "stopped at the limit of 2 matches"},
		{name: "engine flag", args: []string{"--engine", "basic", "-c", "EXPLAIN PATTERN stock1 a"}, prefix: true, stdout: "Plan (engine basic)\n"},
		{name: "no stocks", args: []string{"--no-stocks", "-c", "PATTERN stock1 a;"}, code: 1, stderr: "no stream loaded"},
		{name: "quit stops the script", args: []string{"-c", `\q`, "-c", "SHOW STREAMS"}},
		{name: "version", args: []string{"--version"}, prefix: true, stdout: "sase "},
		{name: "help", args: []string{"-h"}, golden: "help.golden"},
		{name: "--help", args: []string{"--help"}, golden: "help.golden"},
		{name: "help command", args: []string{"help"}, golden: "help.golden"},
		{name: "help after flags is an argument", args: []string{"--format", "csv", "help"}, code: 2, stderr: `unexpected argument "help"`},
		{name: "unknown flag", args: []string{"--colour"}, code: 2, stderr: "flag provided but not defined: -colour"},
		{name: "bad format", args: []string{"--format", "xml"}, code: 2, stderr: `sase: --format: unknown format "xml"`},
		{name: "bad engine", args: []string{"--engine", "warp"}, code: 2, stderr: `sase: --engine: unknown engine "warp"`},
		{name: "bad limit", args: []string{"--limit", "-3"}, code: 2, stderr: "sase: --limit: limit must be a whole number"},
		{name: "stray argument", args: []string{"script.sase"}, code: 2, stderr: `unexpected argument "script.sase"`},
		{name: "missing script", args: []string{"-f", "nope.sase"}, code: 1, stderr: "open nope.sase"},
		{name: "gen without stocks", args: []string{"gen"}, code: 2, stderr: "usage: sase gen stocks"},
		{name: "gen --help", args: []string{"gen", "--help"}, prefix: true, stdout: "Usage: sase gen stocks [flags]"},
		{name: "gen help", args: []string{"gen", "help"}, prefix: true, stdout: "Usage: sase gen stocks [flags]"},
		{name: "gen stocks -h", args: []string{"gen", "stocks", "-h"}, prefix: true, stdout: "Usage: sase gen stocks [flags]"},
		{name: "gen bad flag", args: []string{"gen", "stocks", "--colour"}, code: 2, stderr: "sase: flag provided but not defined: -colour"},
		{name: "bench --help", args: []string{"bench", "--help"}, prefix: true, stdout: "Usage: sase bench [--limit D]"},
		{name: "bench help", args: []string{"bench", "help"}, prefix: true, stdout: "Usage: sase bench [--limit D]"},
		{name: "bench recep --help", args: []string{"bench", "recep", "--help"}, prefix: true, stdout: "Usage: sase bench recep"},
		{name: "nats --help", args: []string{"nats", "--help"}, prefix: true, stdout: "usage: sase nats init URL"},
		{name: "nats -h", args: []string{"nats", "-h"}, prefix: true, stdout: "usage: sase nats init URL"},
		{name: "nats init --help", args: []string{"nats", "init", "--help"}, prefix: true, stdout: "Usage: sase nats init URL"},
		{name: "nats publish -h", args: []string{"nats", "publish", "nats://127.0.0.1:4222", "-h"}, prefix: true, stdout: "Usage: sase nats publish URL"},
		{name: "nats bad flag", args: []string{"nats", "cat", "nats://127.0.0.1:4222", "--colour"}, code: 2, stderr: "sase: flag provided but not defined: -colour"},
		{name: "gen bad value", args: []string{"gen", "stocks", "--events", "0"}, code: 2, stderr: "events must be positive"},
		{name: "bench unknown suite", args: []string{"bench", "fig99"}, code: 1, stderr: `unknown suite "fig99"`},
		{name: "bench bad flag", args: []string{"bench", "--limit", "soon"}, code: 2, stderr: "invalid value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, tt.stdin, tt.args...)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d\nstderr:\n%s", r.code, tt.code, r.stderr)
			}
			if tt.golden != "" {
				testkit.Golden(t, filepath.Join("../../testdata/cli", tt.golden), "-- stdout --\n"+r.stdout+"-- stderr --\n"+r.stderr)
				return
			}
			if r.stdout != tt.stdout && !(tt.prefix && strings.HasPrefix(r.stdout, tt.stdout)) {
				t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, tt.stdout)
			}
			if !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("stderr:\n%s\nwant it to contain:\n%s", r.stderr, tt.stderr)
			}
		})
	}
}

// TestReadmeAlerts runs the README's alerts example on the sample web log
// it names: the script in the README is testdata/cli/alerts.sase, word for
// word.
func TestReadmeAlerts(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile("../../testdata/cli/alerts.sase")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "<<'EOF'\n"+string(script)+"EOF\n") {
		t.Error("README.md does not hold testdata/cli/alerts.sase as its alerts.sase")
	}
	log, err := os.ReadFile("../../testdata/cli/app.log.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, string(log), "--format", "jsonl", "-c", `\timing off`, "-f", "testdata/cli/alerts.sase")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	// The two queries run side by side on the live stream, so how their
	// lines interleave is not fixed: the golden holds them sorted.
	testkit.Golden(t, "../../testdata/cli/alerts.golden", "-- stdout (sorted) --\n"+sortedLines(r.stdout)+"-- stderr (sorted) --\n"+sortedLines(r.stderr))
}

func sortedLines(s string) string {
	lines := strings.SplitAfter(s, "\n")
	slices.Sort(lines)
	return strings.Join(lines, "")
}
