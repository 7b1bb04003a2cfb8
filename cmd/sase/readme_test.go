package main_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readmeBound bounds the whole README run: its slowest parts (the NATS
// failover, the wall-clock alert) wait seconds by design, and a block
// that hangs fails the test instead of CI.
const readmeBound = 4 * time.Minute

// TestReadmeRunsItself pastes README.md into bash from top to bottom, as
// a reader would: every sh block, and every `sase>` session (its
// statements on sase's stdin), in one bash session started in the clone,
// so that REPO, cd and background jobs carry from block to block. The
// session's GOPATH is the temporary one TestMain installed sase in, first
// on PATH: the README's go install finds it up to date (a binary built
// otherwise from the clone would replace it); mktemp makes its folders in
// the test's. It checks that each block exits
// 0, the counts a block states (`| wc -l  # 1672`, `# 4 matches`), and the
// lines of the output block that follows it (`...` stands for lines left
// out; times and rates may differ).
//
// An HTML comment right before a block tells the test more
// (`<!-- readme-test: ... -->`, invisible on the rendered page):
//
//	replace 'OLD' 'NEW' REASON  the block runs with OLD replaced (NEW ':'
//	                            leaves a command out; NEW may read
//	                            what the block has printed so far in
//	                            the file $SASE_README_OUT)
//	background                  a session that runs while the next block
//	                            does, then is stopped with SIGINT
//	concurrent REASON           an sh block that needs nothing the
//	                            session made and leaves nothing for it
//	                            (REASON says why it may): it runs in a
//	                            subshell beside the next blocks, so that
//	                            its wait overlaps their work, and the
//	                            session waits for it at its end
//
// The ports the README names (127.0.0.1:4222, 7000, 8080, 9999) become
// free ones.
func TestReadmeRunsItself(t *testing.T) {
	t.Parallel() // it mostly waits: on links, a server, a wall clock
	r := readmeStarted
	readmeStarted = nil
	if r == nil {
		r = startReadme(false) // the run before built what it builds
	}
	defer r.stop()
	<-r.done
	if r.setup != nil {
		t.Fatal(r.setup)
	}
	blocks, dir := r.blocks, r.dir
	if r.err != nil {
		t.Errorf("the README's session: %v after %v\n%s", r.err, r.took.Round(time.Millisecond), r.out)
	}
	t.Logf("ran %d blocks (%s) in %v; changed: %s", len(r.ran), strings.Join(r.ran, ", "), r.took.Round(time.Millisecond), strings.Join(r.changed, "; "))

	for i, b := range blocks {
		if b.output {
			continue
		}
		f := filepath.Join(dir, strconv.Itoa(i))
		stdout, _ := os.ReadFile(f + ".out")
		stderr, _ := os.ReadFile(f + ".err")
		if i > 0 && blocks[i-1].background {
			// What the block made the session print is the session's.
			p := filepath.Join(dir, strconv.Itoa(i-1))
			out, _ := os.ReadFile(p + ".out")
			errs, _ := os.ReadFile(p + ".err")
			stdout, stderr = append(stdout, out...), append(stderr, errs...)
		}
		where := fmt.Sprintf("README.md:%d", b.line)
		rc, err := os.ReadFile(f + ".rc")
		if err != nil {
			t.Fatalf("%s failed or did not end:\n%s\nstdout:\n%s\nstderr:\n%s", where, b.text, stdout, stderr)
		}
		if t0, t1, ok := strings.Cut(strings.TrimSpace(string(rc)), " "); ok {
			a, _ := strconv.ParseFloat(t0, 64)
			z, _ := strconv.ParseFloat(t1, 64)
			t.Logf("%s took %.1fs", where, z-a)
		}
		for _, want := range b.checks() {
			if !want.in(string(stdout), string(stderr)) {
				t.Errorf("%s: %s\nblock:\n%s\nstdout:\n%s\nstderr:\n%s", where, want, b.text, tail(stdout), tail(stderr))
			}
		}
	}
}

// readmeStarted is the README's run that TestMain starts before the
// tests when TestReadmeRunsItself is among them: the longest test, it
// would otherwise start after every test before it (12.6 s at load 11).
var readmeStarted *readmeRun

// readmeRun is one run of the README's session in bash.
type readmeRun struct {
	tmp          string // the run's folder, removed by stop
	dir          string // the blocks' files
	blocks       []block
	ran, changed []string
	setup        error // what stopped it before the session started
	out          []byte
	err          error // the session's
	took         time.Duration
	cancel       context.CancelFunc
	done         chan struct{} // closed when the session has ended
}

// readmeSelected reports whether the test binary's -run and -skip select
// TestReadmeRunsItself (its first level only), and it is not -list.
func readmeSelected() bool {
	const name = "TestReadmeRunsItself"
	match := func(flagName string) (matched, set bool) {
		f := flag.Lookup(flagName)
		if f == nil || f.Value.String() == "" {
			return false, false
		}
		first, _, _ := strings.Cut(f.Value.String(), "/")
		ok, err := regexp.MatchString(first, name)
		return ok || err != nil, true
	}
	if ok, set := match("test.run"); set && !ok {
		return false
	}
	if ok, _ := match("test.skip"); ok {
		return false
	}
	f := flag.Lookup("test.list")
	return f == nil || f.Value.String() == ""
}

// startReadme writes the README's blocks and a driver script, and starts
// the session; done closes when it ends. changed says sase has changed
// since the last run: its builds are then warmed (see warm).
func startReadme(changed bool) *readmeRun {
	r := &readmeRun{done: make(chan struct{}), cancel: func() {}}
	if err := r.start(changed); err != nil {
		r.setup = err
		close(r.done)
	}
	return r
}

// stop ends the session, if it still runs, and removes its folder.
func (r *readmeRun) stop() {
	r.cancel()
	<-r.done
	if r.tmp != "" {
		os.RemoveAll(r.tmp)
	}
}

// warm compiles, once the README's go install has ended, the packages of
// the build with -tags natsserver that a later block makes (go list
// -export compiles without linking): that block then only links (9 s
// against 14.5 s cold, at load 8), and the go install before does not
// compete with it. Of an unchanged sase that build is the last run's, up
// to date, and warm only costs a second of CPU: start skips it.
func (r *readmeRun) warm(ctx context.Context, warmed chan<- struct{}) {
	defer close(warmed)
	for i, b := range r.blocks {
		if !strings.Contains(b.text, "go install") {
			continue
		}
		for rc := filepath.Join(r.dir, strconv.Itoa(i)+".rc"); ; time.Sleep(100 * time.Millisecond) {
			if _, err := os.Stat(rc); err == nil {
				break
			}
			if ctx.Err() != nil {
				return
			}
		}
		break
	}
	exec.CommandContext(ctx, "go", "list", "-export", "-tags", "natsserver", "-f", "{{.Export}}", ".").Run()
}

func (r *readmeRun) start(changed bool) error {
	text, err := os.ReadFile("../../README.md")
	if err != nil {
		return err
	}
	readme := string(text)
	for _, port := range []string{"4222", "7000", "8080", "9999"} {
		free, err := freePort()
		if err != nil {
			return err
		}
		readme = strings.ReplaceAll(readme, "127.0.0.1:"+port, "127.0.0.1:"+free)
		readme = strings.ReplaceAll(readme, "127.0.0.1/"+port, "127.0.0.1/"+free)
	}
	blocks, err := readmeBlocks(readme)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "sase-readme")
	if err != nil {
		return err
	}
	r.tmp, r.blocks = tmp, blocks
	dir := filepath.Join(tmp, "blocks")
	r.dir = dir
	for _, d := range []string{dir, filepath.Join(tmp, "tmp")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	var driver strings.Builder
	driver.WriteString("set -eo pipefail\ntrap 'echo \"readme-test: exit $? from: $BASH_COMMAND\" >&2' ERR\n")
	for i, b := range blocks {
		if b.output {
			continue
		}
		r.ran = append(r.ran, fmt.Sprintf("README.md:%d", b.line))
		r.changed = append(r.changed, b.changed...)
		f := filepath.Join(dir, strconv.Itoa(i))
		if err := os.WriteFile(f+".in", []byte(b.text), 0o644); err != nil {
			return err
		}
		driver.WriteString("T0=$EPOCHREALTIME\n")
		if b.concurrent {
			driver.WriteString("(\n")
		}
		switch {
		case b.session && b.background:
			// The reader keeps the shell open while the next block runs:
			// it starts once the session shows its last line (grep -s:
			// the session may not have opened its files yet).
			fmt.Fprintf(&driver, "sase -c \"$(cat %q)\" >%q.out 2>%q.err & BG=$!\n", f+".in", f, f)
			fmt.Fprintf(&driver, "for i in $(seq 200); do grep -qsF %q %q.err && break; sleep 0.1; done\n", lastLine(b.shown), f)
		case b.session:
			fmt.Fprintf(&driver, "sase -c \"$(cat %q)\" >%q.out 2>%q.err\n", f+".in", f, f)
		default:
			// A replacement may wait for what the block prints: a poll
			// with a bound, where the README sleeps long enough.
			fmt.Fprintf(&driver, "SASE_README_OUT=%q.out source %q >%q.out 2>%q.err\n", f, f+".in", f, f)
		}
		fmt.Fprintf(&driver, "echo $T0 $EPOCHREALTIME >%q.rc\n", f)
		if b.concurrent {
			driver.WriteString(") & CONCURRENT=\"$CONCURRENT $!\"\n")
		}
		if i > 0 && blocks[i-1].background {
			// The reader reads the match, then leaves the shell: once the
			// session shows the last line the README shows (a script
			// prints no [n]), or 5 s; 1 s without one.
			wait := "sleep 1"
			if last := strings.TrimSpace(shellQuery.ReplaceAllString(lastLine(b.shown), "")); last != "" {
				p := filepath.Join(dir, strconv.Itoa(i-1))
				wait = fmt.Sprintf("for i in $(seq 50); do grep -qsF %q %q.out %q.err && break; sleep 0.1; done", last, p, p)
			}
			fmt.Fprintf(&driver, "%s; kill -INT $BG; wait $BG || true\n", wait)
		}
	}
	// A concurrent block that failed fails the session here.
	driver.WriteString("for p in $CONCURRENT; do wait $p; done\n")
	// What still runs (a server, an instance) is the test's to stop.
	driver.WriteString("jobs -p | xargs -r kill -INT 2>/dev/null || true\n")
	script := filepath.Join(dir, "driver.sh")
	if err := os.WriteFile(script, []byte(driver.String()), 0o644); err != nil {
		return err
	}

	bin := filepath.Dir(sase)
	ctx, cancel := context.WithTimeout(context.Background(), readmeBound)
	r.cancel = cancel
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(),
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GOPATH="+gopath, "GOBIN=", "GOMODCACHE="+gomodcache,
		"SASE_README_NATSBIN="+filepath.Join(gopath, "natsserver", "sase"),
		"TMPDIR="+filepath.Join(tmp, "tmp"))
	// Background jobs (a NATS server, instances) go with the session.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	warmed := make(chan struct{})
	warmCtx, stopWarm := context.WithCancel(ctx)
	if changed {
		go r.warm(warmCtx, warmed)
	} else {
		close(warmed)
	}
	go func() {
		defer close(r.done)
		r.err = cmd.Wait()
		stopWarm() // the session ended: a warm-up still waiting is moot
		<-warmed
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		r.out, r.took = out.Bytes(), time.Since(start)
	}()
	return nil
}

// block is a fenced block of the README: sh, a `sase>` session, or the
// output shown after one.
type block struct {
	line       int // its first line's, in README.md
	text       string
	session    bool     // a sase> session: text is its statements
	shown      string   // what the README shows it prints
	output     bool     // the output shown after the block before
	changed    []string // the replace directives' reasons
	background bool
	concurrent bool
}

var (
	directive = regexp.MustCompile(`^<!-- readme-test: (replace|background|concurrent)\b\s*(.*?)\s*-->$`)
	replaceRE = regexp.MustCompile(`^'([^']*)' '([^']*)'\s*(.*)`)
)

// readmeBlocks parses the README's fenced blocks and their directives.
func readmeBlocks(readme string) ([]block, error) {
	var blocks []block
	var pending []string // directives since the last block
	lines := strings.Split(readme, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if m := directive.FindStringSubmatch(line); m != nil {
			pending = append(pending, m[1]+" "+m[2])
			continue
		}
		if strings.HasPrefix(line, "<!-- readme-test") {
			return nil, fmt.Errorf("README.md:%d: a directive this test does not know: %s", i+1, line)
		}
		if !strings.HasPrefix(line, "```") {
			continue
		}
		lang := strings.TrimPrefix(line, "```")
		b := block{line: i + 1}
		var body []string
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			body = append(body, lines[i])
		}
		text := strings.Join(body, "\n") + "\n"
		switch {
		case lang == "sh":
			b.text = text
		case lang == "" && strings.HasPrefix(text, "sase> "):
			b.session = true
			b.text, b.shown = sessionText(text)
		case lang == "" && len(blocks) > 0 && !blocks[len(blocks)-1].output && !blocks[len(blocks)-1].session:
			b.output = true
			blocks[len(blocks)-1].shown = text
		default:
			pending = nil
			continue // a table, SQL or a listing: nothing to run
		}
		for _, d := range pending {
			kind, arg, _ := strings.Cut(d, " ")
			switch kind {
			case "background":
				b.background = true
			case "concurrent":
				if b.session || arg == "" {
					return nil, fmt.Errorf("README.md:%d: concurrent takes an sh block and a reason", b.line)
				}
				b.concurrent = true
				b.changed = append(b.changed, fmt.Sprintf("README.md:%d concurrent %s", b.line, arg))
			case "replace":
				m := replaceRE.FindStringSubmatch(arg)
				if m == nil || !strings.Contains(b.text, m[1]) {
					return nil, fmt.Errorf("README.md:%d: replace %s: no such text in the block", b.line, arg)
				}
				b.text = strings.ReplaceAll(b.text, m[1], m[2])
				b.changed = append(b.changed, fmt.Sprintf("README.md:%d %s", b.line, arg))
			}
		}
		pending = nil
		blocks = append(blocks, b)
	}
	return blocks, nil
}

// sessionText splits a sase> session into the statements typed and the
// lines shown.
func sessionText(text string) (stmts, shown string) {
	var s, o strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		switch {
		case strings.HasPrefix(line, "sase> "):
			s.WriteString(strings.TrimPrefix(line, "sase> "))
		case strings.HasPrefix(line, "   ->"):
			s.WriteString(strings.TrimPrefix(line, "   ->"))
		default:
			o.WriteString(line)
		}
	}
	return s.String(), o.String()
}

// check is one thing a block must print.
type check struct {
	what      string
	stream    int // 1 stdout, 2 stderr, 0 either
	line      string
	inSummary bool // line is a summary's part: "(4 matches," or "ended: 4 matches,"
}

func (c check) String() string { return c.what }

// in reports whether the line is one of the stream's lines, times and
// rates aside.
func (c check) in(stdout, stderr string) bool {
	var text string
	switch c.stream {
	case 1:
		text = stdout
	case 2:
		text = stderr
	default:
		text = stdout + "\n" + stderr
	}
	want := normalize(c.line)
	for _, l := range strings.Split(text, "\n") {
		n := normalize(l)
		if n == want || c.inSummary && strings.HasPrefix(n, "(") && (strings.HasPrefix(n, "("+want) || strings.Contains(n, ": "+want)) {
			return true
		}
	}
	return false
}

var (
	wcCount    = regexp.MustCompile(`\|\s*wc -l\s*#\s*(\d+)`)
	matchCount = regexp.MustCompile(`(\d+) match(es)?\b`)
	shellQuery = regexp.MustCompile(`^\[\d+\] `)
	timing     = regexp.MustCompile(`\d+(\.\d+)?(ns|µs|ms|s|m|h)\b|\d+(\.\d+)?[KMG]? events/s`)
)

// checks are what the block states it prints: each `| wc -l  # N`'s N on
// stdout, each `# N matches` in a summary on stderr, each line of the
// output shown after it.
func (b block) checks() []check {
	var cs []check
	for _, line := range strings.Split(b.text, "\n") {
		if m := wcCount.FindStringSubmatch(line); m != nil {
			cs = append(cs, check{what: "wc -l prints " + m[1], stream: 1, line: m[1]})
			continue
		}
		if _, comment, ok := strings.Cut(line, "  # "); ok {
			for _, m := range matchCount.FindAllStringSubmatch(comment, -1) {
				cs = append(cs, check{what: "a summary says " + m[0], stream: 2, line: m[0] + ",", inSummary: true})
			}
		}
	}
	for _, line := range strings.Split(strings.TrimSuffix(b.shown, "\n"), "\n") {
		if line != "" && line != "..." {
			cs = append(cs, check{what: fmt.Sprintf("the README shows %q", line), line: line})
		}
	}
	return cs
}

// normalize sets times and rates aside, and the shell's [n] before a live
// query's lines, which a script does not print.
func normalize(s string) string {
	return strings.TrimSpace(shellQuery.ReplaceAllString(timing.ReplaceAllString(s, "T"), ""))
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// tail is the end of a long output.
func tail(b []byte) string {
	const n = 3000
	if len(b) > n {
		return "..." + string(b[len(b)-n:])
	}
	return string(b)
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port, nil
}
