package natsio_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sase-cep/sase"
	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/compiler"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/natsio"
	"github.com/sase-cep/sase/output"
	"github.com/sase-cep/sase/session"
)

// The group tests run the negated-end query, per partition of the
// symbol key: its matches wait for their window to close, so an owner
// killed mid-run leaves some to be found by the next.
const (
	groupQuery  = "PATTERN SEQ(stock a, stock b, !halt h) WHERE [symbol] AND b.price > a.price + 4 WITHIN 20"
	partitions  = 8
	testPinTTL  = time.Second
	childEnv    = "SASE_NATS_CHILD" // server URL: this process is a group member
	childMember = "SASE_NATS_MEMBER"
	childBook   = "SASE_NATS_BOOK" // the member runs bookRules as a book (book_test.go)
	// childStop makes a member stop itself (SIGSTOP) the first time it
	// has checked it owns a partition and holds matches to publish, of
	// as many rules as the variable says at least.
	childStop = "SASE_NATS_SELFSTOP"
)

func TestMain(m *testing.M) {
	if server := os.Getenv(childEnv); server != "" {
		// A member run by a failover test, until it is killed.
		if rules, _ := strconv.Atoi(os.Getenv(childStop)); rules > 0 {
			var once sync.Once
			natsio.SetPauseAfterGuard(func(held int) {
				if held >= rules {
					once.Do(func() { syscall.Kill(os.Getpid(), syscall.SIGSTOP) })
				}
			})
		}
		cfg := groupConfig(server, os.Getenv(childMember))
		if os.Getenv(childBook) != "" {
			cfg = bookConfig(server, os.Getenv(childMember))
		}
		err := natsio.RunGroup(context.Background(), cfg)
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// The tests mostly wait (pin TTLs, takeovers, a stream's end), each
	// on a server of its own: four work at once, not GOMAXPROCS (2 here),
	// unless -parallel says. Eight at once took 13 s where four took 21,
	// but beside the other packages' tests they starved the members past
	// their pin TTL, and a failover trial saw no new match for 20 s (see
	// the stop note of 2026-12-07). A server starts in about 10 ms, so
	// each test keeps its own rather than share one. A test that only
	// waits for a late or duplicate match (quiet) gives its place up: as
	// many again may run, so that such waits overlap the others' work.
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	n := max(4, runtime.GOMAXPROCS(0))
	if set {
		n = flag.Lookup("test.parallel").Value.(flag.Getter).Get().(int)
	} else {
		flag.Set("test.parallel", strconv.Itoa(2*n))
	}
	natsio.SetBusy(n)
	os.Exit(m.Run())
}

// memberLog is where members note the partitions they take and lose:
// stderr with SASE_NATS_LOG=1.
func memberLog() io.Writer {
	if os.Getenv("SASE_NATS_LOG") != "" {
		return os.Stderr
	}
	return io.Discard
}

func groupConfig(server, member string) natsio.GroupConfig {
	return natsio.GroupConfig{
		Server: server, Stream: "EVENTS", Group: "alerts", Matches: "MATCHES", Query: "q1",
		Compile: compileGroupQuery, PerPartition: true, Format: "csv",
		Member: member, PinTTL: testPinTTL, Errors: memberLog(),
	}
}

// compileGroupQuery compiles groupQuery.
func compileGroupQuery(sc *event.Schema) (natsio.Compiled, error) {
	return compileOn(sc, groupQuery, 20)
}

// compileOn declares the stream's names (a partition starts with no
// event) and compiles text, whose rows are its variables a and b.
func compileOn(sc *event.Schema, text string, window int64) (natsio.Compiled, error) {
	for _, t := range []string{"stock", "halt", "end"} {
		id := sc.AddType(t)
		for _, a := range []string{"symbol", "price"} {
			sc.Declare(id, sc.AddAttr(a))
		}
	}
	q, err := sase.Compile(text, &event.Stream{Schema: sc})
	cols := []output.Column{{Name: "a", Kind: output.Event}, {Name: "b", Kind: output.Event}}
	return natsio.Compiled{Query: compiler.Of(q), Schema: output.Schema{Columns: cols}, Window: window}, err
}

// groupCSV is a walk that ends with an event per symbol past every
// window, so that every match is complete in the stream as in a file.
func groupCSV(n int, seed uint64) string {
	csv := walkCSV(n, seed)
	for _, s := range symbols {
		csv += fmt.Sprintf("end,%d,%s,0\n", n+1000, s)
	}
	return csv
}

// expected is what one process finds in csv: groupQuery's matches as
// jsonl rows with the file's seqs (awaitMatches renumbers them).
func expected(t testing.TB, csv string) []string { return expectedOf(t, csv, groupQuery) }

func expectedOf(t testing.TB, csv, query string) []string {
	path := filepath.Join(t.TempDir(), "events.csv")
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	want := lines(runScript(t, "SET format = jsonl; LOAD '"+path+"' AS ev;\n"+query+";"))
	if len(want) < 100 {
		t.Fatalf("only %d matches: the stream does not exercise the group", len(want))
	}
	return want
}

// awaitMatches waits until the matches stream holds want's number of
// matches, and a pin TTL more, then compares it with want, the matches
// of csv as a file: it reports and returns the matches lost and those
// stored twice (or wrong).
func awaitMatches(t testing.TB, js jetstream.JetStream, csv string, want []string) (lost, duplicated int) {
	t.Helper()
	return awaitMatchesOf(t, js, csv, want, false)
}

// awaitMatchesOf is awaitMatches; with byRule, each match stored is
// tagged with its subject's query (tagRule), as want's must be.
func awaitMatchesOf(t testing.TB, js jetstream.JetStream, csv string, want []string, byRule bool) (lost, duplicated int) {
	t.Helper()
	// It waits while matches keep coming: on a loaded machine a takeover
	// and its replay can take long; 20 s with none new is a stall.
	deadline := time.Now().Add(20 * time.Second)
	late := "" // says whether a shortfall may be slowness rather than loss
	var stored uint64
	for {
		st, err := js.Stream(context.Background(), "MATCHES")
		if err == nil {
			n := storedMatches(st)
			if n >= uint64(len(want)) {
				break
			}
			if n > stored {
				stored, deadline = n, time.Now().Add(20*time.Second)
			}
		}
		if time.Now().After(deadline) {
			late = fmt.Sprintf(" (stopped waiting after 20 s with no new match, at %d)", stored)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	natsio.Quiet(t)
	time.Sleep(2 * testPinTTL) // for any match stored twice, or late
	got, dups := publishedOf(t, js, "MATCHES", byRule)
	if len(dups) > 0 {
		t.Errorf("%d Msg-Ids stored twice: %v", len(dups), dups[:min(3, len(dups))])
	}
	got = renumber(t, got, nil)
	want = renumber(t, want, fileSeqs(t, js, "EVENTS", csv))
	missing, extra := diff(want, got)
	if len(missing)+len(extra) > 0 {
		t.Errorf("%d matches stored, %d expected%s: %d lost %v, %d duplicated or wrong %v", len(got), len(want), late,
			len(missing), missing[:min(2, len(missing))], len(extra), extra[:min(2, len(extra))])
	}
	return len(missing), max(len(extra), len(dups))
}

// storedMatches is the number of matches st holds: its messages but the
// owners' fences.
func storedMatches(st jetstream.Stream) uint64 {
	info, err := st.Info(context.Background(), jetstream.WithSubjectFilter("sase_fence.>"))
	if err != nil {
		return 0
	}
	var fences uint64
	for _, n := range info.State.Subjects {
		fences += n
	}
	// The server counts the subjects after the messages: a fence stored
	// in between is in the first count only.
	if fences > info.State.Msgs {
		return 0
	}
	return info.State.Msgs - fences
}

// diff is what a (sorted) has that b lacks, and the reverse, as multisets.
func diff(a, b []string) (onlyA, onlyB []string) {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || i < len(a) && a[i] < b[j]:
			onlyA = append(onlyA, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			onlyB = append(onlyB, b[j])
			j++
		default:
			i, j = i+1, j+1
		}
	}
	return onlyA, onlyB
}

// TestGroupInstances: two and three members of one group share the
// partitions, and together store each match once.
func TestGroupInstances(t *testing.T) {
	t.Parallel() // its trials have their own servers
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			natsio.Parallel(t) // each has its server; they mostly wait
			server := startServer(t)
			_, js := connect(t, server)
			csv := groupCSV(3000, uint64(n))
			publishCSV(t, js, "EVENTS", partitions, csv)
			want := expected(t, csv)
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					if err := natsio.RunGroup(ctx, groupConfig(server, fmt.Sprintf("m%d", i))); err != nil {
						t.Error(err)
					}
				})
			}
			awaitMatches(t, js, csv, want)
			cancel()
			wg.Wait()
		})
	}
}

// TestDeliveredNotClaimed: a partition's messages were delivered to a
// member that died before it claimed the partition (here a client that
// takes them and goes): they wait, unacked, for AckWait, and no new
// event comes to show the next member the server has pinned it. That
// member takes the partition over at once and loses nothing.
func TestDeliveredNotClaimed(t *testing.T) {
	natsio.Parallel(t)
	server := startServer(t)
	_, js := connect(t, server)
	csv := groupCSV(3000, 7)
	publishCSV(t, js, "EVENTS", partitions, csv)
	want := expected(t, csv)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := js.Stream(ctx, "EVENTS")
	if err != nil {
		t.Fatal(err)
	}
	// The consumer as members name and make it: group alerts, query q1.
	const p = "3"
	cons, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable: "alerts_q1_" + p, FilterSubject: p + "." + natsio.EventsPrefix,
		AckPolicy: jetstream.AckAllPolicy, AckWait: time.Hour, MaxAckPending: 1 << 16,
		PriorityPolicy: jetstream.PriorityPolicyPinned, PinnedTTL: testPinTTL, PriorityGroups: []string{"alerts"},
	})
	if err != nil {
		t.Fatal(err)
	}
	// All the partition's messages: a fetch of that many ends when they
	// have come, not at its wait.
	pending := cons.CachedInfo().NumPending
	batch, err := cons.Fetch(int(pending), jetstream.FetchMaxWait(time.Second), jetstream.FetchPriorityGroup("alerts"))
	if err != nil {
		t.Fatal(err)
	}
	taken := 0
	for range batch.Messages() {
		taken++
	}
	if info, err := cons.Info(ctx); err != nil || taken == 0 || info.NumPending != 0 || info.NumAckPending != taken {
		t.Fatalf("took %d messages; the consumer then has %+v (%v): want all of them delivered and pending", taken, info, err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := natsio.RunGroup(ctx, groupConfig(server, "m0")); err != nil {
			t.Error(err)
		}
	})
	awaitMatches(t, js, csv, want)
	cancel()
	wg.Wait()
}

// TestGroupGlobal: a query with no equivalence test on the key runs on
// the whole stream, on one member at a time.
func TestGroupGlobal(t *testing.T) {
	natsio.Parallel(t)
	const text = "PATTERN SEQ(stock a, stock b) WHERE b.price > a.price + 8 WITHIN 3"
	server := startServer(t)
	_, js := connect(t, server)
	csv := groupCSV(3000, 4)
	// One event a message: batches, each of one partition, would interleave
	// the partitions out of ts order in the stream this query reads whole.
	publishBatched(t, js, "EVENTS", partitions, csv, 1)
	want := expectedOf(t, csv, text)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range 2 {
		cfg := groupConfig(server, fmt.Sprintf("m%d", i))
		cfg.PerPartition = false
		cfg.Compile = func(sc *event.Schema) (natsio.Compiled, error) { return compileOn(sc, text, 3) }
		wg.Go(func() {
			if err := natsio.RunGroup(ctx, cfg); err != nil {
				t.Error(err)
			}
		})
	}
	awaitMatches(t, js, csv, want)
	cancel()
	wg.Wait()
}

// member runs the test group's member name on wg until stop is called:
// its Stats count the matches it stores, notes gathers what it notes.
func member(t testing.TB, ctx context.Context, wg *sync.WaitGroup, server, name string) (cfg natsio.GroupConfig, notes *testkit.SyncBuffer, stop func()) {
	ctx, stop = context.WithCancel(ctx)
	notes = &testkit.SyncBuffer{}
	cfg = groupConfig(server, name)
	cfg.Errors, cfg.Stats = notes, &natsio.GroupStats{}
	wg.Go(func() {
		if err := natsio.RunGroup(ctx, cfg); err != nil {
			t.Error(err)
		}
	})
	return cfg, notes, stop
}

// child starts a member as a child process (this test binary). Its
// notes go to log if not nil, else to stderr with SASE_NATS_LOG=1.
func child(t testing.TB, server, member string, log io.Writer, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), childEnv+"="+server, childMember+"="+member), env...)
	cmd.Stderr = os.Stderr
	if log != nil {
		cmd.Env = append(cmd.Env, "SASE_NATS_LOG=1")
		cmd.Stderr = log
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

// publishSlowly publishes csv's rows over about d, so that members are
// killed or paused in the middle of the stream.
func publishSlowly(t testing.TB, js jetstream.JetStream, csv string, d time.Duration) {
	rows := strings.SplitAfter(strings.TrimSpace(csv), "\n")
	header, rows := rows[0], rows[1:]
	const chunks = 20
	for i := range chunks {
		part := rows[i*len(rows)/chunks : (i+1)*len(rows)/chunks]
		if _, err := natsio.Publish(context.Background(), js, strings.NewReader(header+strings.Join(part, "")+"\n"), natsio.PublishConfig{Key: "symbol", Format: "csv"}); err != nil {
			t.Error(err)
			return
		}
		time.Sleep(d / chunks)
	}
}

// TestFailover kills a member with SIGKILL at a random point: the other
// takes its partitions over, and no match is lost or stored twice. In
// the last trial the stream is all published when the member dies: the
// events it had not acked wait for the next owner, with no new event to
// bring it.
func TestFailover(t *testing.T) {
	t.Parallel() // its trials have their own servers
	for trial := range 3 {
		t.Run(fmt.Sprint(trial), func(t *testing.T) {
			natsio.Parallel(t)
			failover(t, uint64(10+trial), trial == 2, nil, kill)
		})
	}
}

func kill(_ testing.TB, a *exec.Cmd, _ notes) { a.Process.Signal(syscall.SIGKILL) }

// notes are the failover members' notes: a's, then b's.
type notes [2]*testkit.SyncBuffer

// pause stops member a (SIGSTOP) past the pin TTL, then resumes it: once
// b owns the partitions a owned, and two pin TTLs at least (an a that
// owned none yet is still stopped past its pin).
func pause(t testing.TB, a *exec.Cmd, n notes) {
	a.Process.Signal(syscall.SIGSTOP)
	resumeLate(t, a, n, 2*testPinTTL)
}

// resumeLate resumes a stopped member a once b owns every partition a
// owned (a has lost them: a fixed pause did not make sure of it on a
// loaded machine), and no sooner than atLeast after it is called.
func resumeLate(t testing.TB, a *exec.Cmd, n notes, atLeast time.Duration) {
	start := time.Now()
	lost := func() bool {
		b := owned(n[1].String(), "b")
		for p := range owned(n[0].String(), "a") {
			if !b[p] {
				return false
			}
		}
		return true
	}
	for deadline := start.Add(20 * time.Second); !lost(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("b had not taken a's partitions over 20 s after a stopped:\n%s\n%s", n[0], n[1])
			break
		}
	}
	time.Sleep(time.Until(start.Add(atLeast)))
	a.Process.Signal(syscall.SIGCONT)
}

// owned are the partitions that member's notes say it owns now.
func owned(notes, member string) map[string]bool {
	own := map[string]bool{}
	for _, line := range strings.Split(notes, "\n") {
		switch m := ownerNote.FindStringSubmatch(line); {
		case m == nil || m[1] != member:
		case m[2] == "owns":
			own[m[3]] = true
		default:
			delete(own, m[3])
		}
	}
	return own
}

// ownerNote is a member's note that it takes or gives up a partition.
var ownerNote = regexp.MustCompile(`^(\S+): (owns|lost|hands) partition (\S+)`)

// TestZombie pauses a member past the pin TTL and resumes it: it has lost
// its partitions, and writes nothing more for them. In the first trial
// SIGSTOP comes at a random point; in the second the member stops itself
// between its ownership check and publishing the matches it holds, and
// the matches stream's duplicate window is shorter than the pause, so
// the Msg-Ids do not hide what the zombie writes: the fences refuse it.
func TestZombie(t *testing.T) {
	t.Parallel() // its trials have their own servers
	t.Run("signal", func(t *testing.T) {
		natsio.Parallel(t)
		failover(t, 20, false, nil, pause)
	})
	t.Run("held", func(t *testing.T) {
		natsio.Parallel(t)
		dup := time.Second
		failover(t, 21, false, &dup, held)
	})
}

// held waits until member a has stopped itself and resumes it past the
// matches stream's duplicate window (1 s; the pin TTL too) after b took
// over the matches a held: four pin TTLs after it stopped.
func held(t testing.TB, a *exec.Cmd, n notes) {
	awaitStopped(t, a)
	resumeLate(t, a, n, 4*testPinTTL)
}

// awaitStopped waits until cmd's process has stopped itself.
func awaitStopped(t testing.TB, cmd *exec.Cmd) {
	stat := fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(stat)
		if err != nil {
			t.Fatal(err)
		}
		// pid (comm) state ...: the state follows the last ')'.
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && strings.HasPrefix(string(b[i:]), ") T") {
			return
		}
	}
	t.Fatal("the member never stopped itself: it never held matches after its ownership check")
}

// failover runs two members a and b in child processes, publishes a
// stream over two seconds (idle: at once), and hits a in the middle (idle:
// once all is published): hit has a's process and the members' notes. With
// selfStop, the matches stream's duplicate window is *selfStop, and a
// stops itself (childStop).
func failover(t testing.TB, seed uint64, idle bool, selfStop *time.Duration, hit func(t testing.TB, a *exec.Cmd, n notes)) (lost, duplicated int) {
	return failoverOf(t, seed, idle, selfStop, hit, oneQuery)
}

// members is what a failover's members run: the children's environment,
// and the matches expected of csv (tagged by rule with byRule). A member
// that stops itself does so holding matches of heldRules rules.
type members struct {
	env       []string
	expected  func(t testing.TB, csv string) []string
	byRule    bool
	heldRules int
}

// oneQuery is groupQuery's members.
var oneQuery = members{expected: expected, heldRules: 1}

// failoverOf is failover, the members running m.
func failoverOf(t testing.TB, seed uint64, idle bool, selfStop *time.Duration, hit func(t testing.TB, a *exec.Cmd, n notes), m members) (lost, duplicated int) {
	server := startServer(t)
	_, js := connect(t, server)
	env := m.env
	if selfStop != nil {
		cfg := jetstream.StreamConfig{Name: "MATCHES", Subjects: []string{"matches.>", "sase_fence.>"}, Duplicates: *selfStop}
		if _, err := js.CreateStream(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
		env = append(slices.Clip(env), childStop+"="+strconv.Itoa(m.heldRules))
	}
	n := 4000
	if idle {
		n = 20000 // long enough to be read still when the member dies
	}
	csv := groupCSV(n, seed)
	want := m.expected(t, csv)
	if _, err := natsio.InitStream(context.Background(), js, "EVENTS", partitions, "symbol", ""); err != nil {
		t.Fatal(err)
	}
	// The members' logs, shown if the trial loses or repeats a match.
	logs := notes{{}, {}}
	a, _ := child(t, server, "a", logs[0], env...), child(t, server, "b", logs[1], m.env...)
	done := make(chan struct{})
	r := rand.New(rand.NewPCG(seed, 1))
	pause := time.Duration(500+r.IntN(1500)) * time.Millisecond
	go func() {
		defer close(done)
		if idle {
			time.Sleep(time.Second) // the members have their partitions
			publishSlowly(t, js, csv, 0)
			return
		}
		publishSlowly(t, js, csv, 2*time.Second)
	}()
	if idle {
		<-done
		pause = time.Duration(r.IntN(200)) * time.Millisecond
	}
	time.Sleep(pause)
	hit(t, a, logs)
	<-done
	lost, duplicated = awaitMatchesOf(t, js, csv, want, m.byRule)
	if lost+duplicated > 0 {
		t.Logf("member a:\n%s\nmember b:\n%s", logs[0], logs[1])
	}
	return lost, duplicated
}

// TestGroupScript runs one script in two sessions, as two instances of
// an alert script would run: LISTEN WITH (group = ...) and SET output.
func TestGroupScript(t *testing.T) {
	natsio.Parallel(t)
	server := startServer(t)
	_, js := connect(t, server)
	csv := groupCSV(3000, 5)
	publishCSV(t, js, "EVENTS", partitions, csv)
	// Two queries: each its own consumers and checkpoints.
	const drop = "PATTERN SEQ(stock a, stock b) WHERE [symbol] AND b.price < a.price - 2 WITHIN 20"
	want := append(expected(t, csv), expectedOf(t, csv, drop)...)
	slices.Sort(want)
	script := "LISTEN '" + streamURL(server, "EVENTS") + "' AS ev FORMAT csv WITH (group = 'alerts');\n" +
		"SET output = '" + streamURL(server, "MATCHES") + "';\n" + groupQuery + ";\n" + drop + ";\n"
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var logs [2]*testkit.SyncBuffer
	var sessions [2]*session.Session
	var outs [2]*testkit.SyncBuffer
	for i := range 2 {
		stderr := &testkit.SyncBuffer{}
		logs[i] = stderr
		stdout := &testkit.SyncBuffer{}
		s := session.New(stdout, stderr)
		sessions[i], outs[i] = s, stdout
		if err := s.Exec(ctx, &ast.Source{Name: "<test>", Text: script}); err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		wg.Go(func() {
			if err := s.Wait(ctx); err != context.Canceled {
				t.Errorf("Wait: %v\n%s", err, stderr)
			}
			if !strings.Contains(stderr.String(), "query 1 started on ev, with the other instances of its group") {
				t.Errorf("stderr:\n%s", stderr)
			}
		})
	}
	awaitMatches(t, js, csv, want)
	checkShowQueries(t, js, sessions[:], []int{len(want) - len(expectedOf(t, csv, drop)), len(expectedOf(t, csv, drop))})
	if t.Failed() {
		t.Logf("the instances' notes:\n%s\n%s", logs[0], logs[1])
	}
	if err := sessions[0].Exec(ctx, &ast.Source{Name: "<test>", Text: "SET format = csv; SHOW QUERIES;"}); err != nil {
		t.Fatal(err)
	}
	if out := outs[0].String(); !strings.Contains(out, "id,stream,state,matches,events,query,group\n1,ev,running,") || !strings.Contains(out, " pending acks, ") {
		t.Errorf("SHOW QUERIES:\n%s", out)
	}
	cancel()
	wg.Wait()
	// Each instance's note at the end says what it stored and read: the
	// two store each match once.
	end := regexp.MustCompile(`\(query 1 stopped: (\d+) match(?:es)? stored, (\d+) events? read\)`)
	var stored, read int
	for _, l := range logs {
		m := end.FindStringSubmatch(l.String())
		if m == nil {
			t.Fatalf("no end note with counts:\n%s", l)
		}
		n, _ := strconv.Atoi(m[1])
		r, _ := strconv.Atoi(m[2])
		stored, read = stored+n, read+r
	}
	if q1 := len(want) - len(expectedOf(t, csv, drop)); stored != q1 || read < 3000 {
		t.Errorf("the instances' end notes say %d matches stored and %d events read; want %d and at least 3000", stored, read, q1)
	}
	// [symbol] holds the stream's key: each partition runs its own query.
	if all := logs[0].String() + logs[1].String(); !strings.Contains(all, "owns partition 1") || strings.Contains(all, "global") {
		t.Errorf("the partitions were not shared:\n%s", all)
	}
}

// TestAckLimits: MaxAckPending holds a window's events (estimated from
// the rate the stream was stored at) and a batch; AckWait outlasts the
// window.
func TestAckLimits(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	state := func(msgs uint64, span time.Duration) jetstream.StreamState {
		return jetstream.StreamState{Msgs: msgs, FirstTime: t0, LastTime: t0.Add(span)}
	}
	min := natsio.MinAckPending
	for _, c := range []struct {
		name       string
		st         jetstream.StreamState
		partitions int
		window     int64
		unit       time.Duration
		wantAck    int
		wantWait   time.Duration
	}{
		{"empty stream", state(0, 0), 8, 20, 0, min, time.Hour},
		// 1000 events/s in 8 partitions, a window of 60 s: 7500 a partition.
		{"a minute's window", state(100000, 100*time.Second), 8, 60, time.Second, 2*7500 + 1024, time.Hour},
		{"unit-less ticks are ms", state(100000, 100*time.Second), 1, 60000, 0, 2*60000 + 1024, time.Hour},
		{"a day's window", state(10, 10*time.Second), 1, 86400, time.Second, 2*86400 + 1024, 48 * time.Hour},
		{"a burst is capped", state(1<<30, time.Millisecond), 1, 1000, time.Second, 1 << 22, time.Hour},
	} {
		t.Run(c.name, func(t *testing.T) {
			ack, wait := natsio.AckLimits(c.st, c.partitions, c.window, c.unit)
			if ack != c.wantAck || wait != c.wantWait {
				t.Errorf("AckLimits = %d, %v, want %d, %v", ack, wait, c.wantAck, c.wantWait)
			}
		})
	}
}

// TestWindowOutgrowsAckPending: a partition's consumer is created with
// AckLimits' values, and an owner whose window holds more events than
// its MaxAckPending (nothing can be acked, nothing more is delivered)
// raises it, and finds every match.
func TestWindowOutgrowsAckPending(t *testing.T) {
	natsio.Parallel(t)
	const text = "PATTERN SEQ(halt a, end b) WHERE [symbol] WITHIN 100000"
	server := startServer(t)
	_, js := connect(t, server)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := natsio.InitStream(ctx, js, "EVENTS", 1, "symbol", ""); err != nil {
		t.Fatal(err)
	}
	cfg := groupConfig(server, "m")
	cfg.PerPartition = false
	cfg.Options.TimeUnit = time.Second
	cfg.Compile = func(sc *event.Schema) (natsio.Compiled, error) { return compileOn(sc, text, 100000) }
	errs := &testkit.SyncBuffer{}
	cfg.Errors = errs
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	wg.Go(func() {
		if err := natsio.RunGroup(ctx, cfg); err != nil {
			t.Error(err)
		}
	})
	info := func() *jetstream.ConsumerInfo {
		c, err := js.Consumer(ctx, "EVENTS", "alerts_q1_global")
		if err != nil {
			return nil
		}
		info, err := c.Info(ctx)
		if err != nil {
			return nil
		}
		return info
	}
	for deadline := time.Now().Add(10 * time.Second); info() == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no consumer in 10 s")
		}
	}
	// Created on an empty stream: the least MaxAckPending; AckWait twice
	// the window of 100000 s.
	if c := info().Config; c.MaxAckPending != natsio.MinAckPending || c.AckWait != 200000*time.Second {
		t.Errorf("consumer created with MaxAckPending %d, AckWait %v", c.MaxAckPending, c.AckWait)
	}
	csv := groupCSV(natsio.MinAckPending+1000, 7)
	want := expectedOf(t, csv, text)
	// One event a message: MaxAckPending counts messages.
	if _, err := natsio.Publish(ctx, js, strings.NewReader(csv), natsio.PublishConfig{Key: "symbol", Batch: 1}); err != nil {
		t.Fatal(err)
	}
	awaitMatches(t, js, csv, want)
	if c := info().Config; c.MaxAckPending != 2*natsio.MinAckPending {
		t.Errorf("MaxAckPending %d, want it doubled to %d", c.MaxAckPending, 2*natsio.MinAckPending)
	}
	if !strings.Contains(errs.String(), "MaxAckPending raised to") {
		t.Errorf("no note of the raise:\n%s", errs)
	}
}

// groupStatus is SHOW QUERIES' group column.
var groupStatus = regexp.MustCompile(`^partitions((?: \d+)+) of 8, lag (\d+), (\d+) pending acks, \d+ replayed \(messages\)$`)

// checkShowQueries: for each query, SHOW QUERIES in each session lists
// the matches that session stored (together, the query's matches), and
// the partitions it owns (together, each partition with events, once),
// each caught up (lag 0) with as many pending acks as their consumers
// say, once the owners are idle (an owner that took a partition over
// late may still be acking).
func checkShowQueries(t *testing.T, js jetstream.JetStream, sessions []*session.Session, matches []int) {
	t.Helper()
	st, err := js.Stream(context.Background(), "EVENTS")
	if err != nil {
		t.Fatal(err)
	}
	si, err := st.Info(context.Background(), jetstream.WithSubjectFilter("*."+natsio.EventsPrefix))
	if err != nil {
		t.Fatal(err)
	}
	var busy []string // the partitions with events
	for subject := range si.State.Subjects {
		busy = append(busy, strings.TrimSuffix(subject, "."+natsio.EventsPrefix))
	}
	slices.Sort(busy)
	var problems []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		problems = showQueriesProblems(t, js, sessions, matches, busy)
		if len(problems) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, p := range problems {
		t.Error(p)
	}
}

func showQueriesProblems(t *testing.T, js jetstream.JetStream, sessions []*session.Session, matches []int, busy []string) []string {
	var problems []string
	for q, want := range matches {
		var stored int64
		var owned []string
		for _, s := range sessions {
			info := s.Queries()[q]
			stored += info.Matches
			if info.Group == "standby, 0 replayed (messages)" {
				continue
			}
			m := groupStatus.FindStringSubmatch(info.Group)
			if info.State != session.Running || m == nil || m[2] != "0" {
				problems = append(problems, fmt.Sprintf("SHOW QUERIES: query %d %s, group %q", info.ID, info.State, info.Group))
				continue
			}
			var acks int
			for _, p := range strings.Fields(m[1]) {
				owned = append(owned, p)
				c, err := js.Consumer(context.Background(), "EVENTS", fmt.Sprintf("alerts_q%d_%s", q+1, p))
				if err != nil {
					t.Fatal(err)
				}
				acks += c.CachedInfo().NumAckPending
			}
			if m[3] != fmt.Sprint(acks) {
				problems = append(problems, fmt.Sprintf("query %d: %s pending acks listed, the consumers have %d", info.ID, m[3], acks))
			}
		}
		if stored != int64(want) {
			problems = append(problems, fmt.Sprintf("query %d: the sessions list %d matches stored, want %d", q+1, stored, want))
		}
		slices.Sort(owned)
		if !slices.Equal(owned, busy) {
			problems = append(problems, fmt.Sprintf("query %d: the sessions own partitions %v, those with events are %v", q+1, owned, busy))
		}
	}
	return problems
}

// TestTakeoverInsideBatch stops an owner when the last match it
// published was released by an event in the middle of a message it has
// not acked (the window has not passed the message's last events): the
// next owner replays that message from its first event, drops the
// matches it regenerates up to that position, and publishes the rest;
// nothing is lost or stored twice.
func TestTakeoverInsideBatch(t *testing.T) {
	natsio.Parallel(t)
	server := startServer(t)
	_, js := connect(t, server)
	ctx := context.Background()
	if _, err := natsio.InitStream(ctx, js, "EVENTS", 1, "symbol", ""); err != nil {
		t.Fatal(err)
	}
	csv := groupCSV(3000, 8)
	want := expected(t, csv)
	rows := strings.SplitAfter(csv, "\n")
	header, rows := rows[0], rows[1:len(rows)-1]
	publish := func(rows []string) {
		// A minute's linger: full batches of 500 events, spanning 500 ticks
		// of a 20-tick window.
		if _, err := natsio.Publish(ctx, js, strings.NewReader(header+strings.Join(rows, "")), natsio.PublishConfig{Key: "symbol", Batch: 500, Linger: time.Minute}); err != nil {
			t.Fatal(err)
		}
	}
	publish(rows[:1750]) // 3 batches and a half

	var wg sync.WaitGroup
	a, _, stopA := member(t, ctx, &wg, server, "a")
	// A has read everything and published what it could: the last match's
	// position is inside the last message, which it has not acked.
	var pos, acked uint64
	var index int
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		pos, index, acked = 0, 0, 0
		if c, err := js.Consumer(ctx, "EVENTS", "alerts_q1_0"); err == nil {
			info := c.CachedInfo()
			st, _ := js.Stream(ctx, "MATCHES")
			if st != nil {
				if m, err := st.GetLastMsgForSubject(ctx, natsio.MatchesSubject("q1", "0")); err == nil {
					seq, _, _ := strings.Cut(m.Header.Get(natsio.HeaderPosition), ".")
					n, _ := strconv.ParseInt(seq, 10, 64)
					msg, i := natsio.SplitSeq(n)
					pos, index = uint64(msg), i
				}
			}
			acked = info.AckFloor.Stream
			if info.NumPending == 0 && info.NumAckPending > 0 && pos == 4 && acked == 3 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the owner did not reach the end of message 4 (last match at message %d, index %d; ack floor %d)", pos, index, acked)
		}
	}
	stopA()
	wg.Wait()
	if index == 0 {
		t.Fatalf("the last match is at the first event of message %d: not inside a batch", pos)
	}

	b, notes, stopB := member(t, ctx, &wg, server, "b")
	defer func() {
		stopB()
		wg.Wait()
	}()
	publish(rows[1750:])
	awaitMatches(t, js, csv, want)
	if !strings.Contains(notes.String(), "b: owns partition 0 (replays 1 messages)") {
		t.Errorf("b did not replay message 4:\n%s", notes)
	}
	// Not even sent twice (the Msg-Id would hide it in the stream).
	if a, b := a.Stats.Matches(), b.Stats.Matches(); a+b != int64(len(want)) {
		t.Errorf("a published %d matches, b %d: %d in all, want %d", a, b, a+b, len(want))
	}
}

// TestTakeoverAfterTick: an owner stops after a tick released a match,
// before the next event. At tick 100 it has acked the match's events
// (it published the match first), not the tick; at tick 22 the window
// it needs to ack them has not passed, and the next owner replays them
// and the tick, which releases the match again at the same position
// (the tick's, however the replay's lines are batched): dropped. Each
// match is stored once either way.
func TestTakeoverAfterTick(t *testing.T) {
	t.Parallel() // its trials have their own servers
	for _, c := range []struct {
		tick    int
		acked   uint64 // the ack floor the owner reaches
		replays int
	}{{100, 1, 1}, {22, 0, 2}} {
		t.Run(fmt.Sprint(c.tick), func(t *testing.T) {
			natsio.Parallel(t)
			server := startServer(t)
			_, js := connect(t, server)
			ctx := context.Background()
			if _, err := natsio.InitStream(ctx, js, "EVENTS", 1, "symbol", ""); err != nil {
				t.Fatal(err)
			}
			publish := func(csv string) {
				if _, err := natsio.Publish(ctx, js, strings.NewReader("type,ts,symbol,price\n"+csv), natsio.PublishConfig{Key: "symbol"}); err != nil {
					t.Fatal(err)
				}
			}
			tick := func(ts int) {
				if _, err := js.Publish(ctx, "events._", fmt.Appendf(nil, `{"ts": %d}`, ts)); err != nil {
					t.Fatal(err)
				}
			}
			publish("stock,1,IBM,500\nstock,2,IBM,510\n") // message 1: a match waiting on its negated end
			tick(c.tick)                                  // message 2: releases it
			var wg sync.WaitGroup
			a, _, stopA := member(t, ctx, &wg, server, "a")
			for deadline := time.Now().Add(testkit.Deadline); a.Stats.Matches() < 1; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the tick did not release the match")
				}
			}
			time.Sleep(200 * time.Millisecond) // the owner acks what it can
			cons, err := js.Consumer(ctx, "EVENTS", "alerts_q1_0")
			if err != nil {
				t.Fatal(err)
			}
			if floor := cons.CachedInfo().AckFloor.Stream; floor != c.acked {
				t.Errorf("ack floor %d after the tick, want %d", floor, c.acked)
			}
			stopA()
			wg.Wait()

			b, notes, stopB := member(t, ctx, &wg, server, "b")
			defer func() {
				stopB()
				wg.Wait()
			}()
			publish("stock,300,IBM,500\nstock,301,IBM,510\n")
			tick(400)
			for deadline := time.Now().Add(testkit.Deadline); b.Stats.Matches() < 1; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the next owner released no match:\n%s", notes)
				}
			}
			natsio.Quiet(t)
			time.Sleep(testPinTTL / 2) // for a match stored twice
			got, dups := published(t, js, "MATCHES")
			if len(got) != 2 || len(dups) > 0 {
				t.Errorf("matches stored: %q (Msg-Ids twice: %v), want the two pairs once each", got, dups)
			}
			if n := a.Stats.Matches() + b.Stats.Matches(); n != 2 {
				t.Errorf("a published %d matches, b %d: want 2 in all", a.Stats.Matches(), b.Stats.Matches())
			}
			if want := fmt.Sprintf("b: owns partition 0 (replays %d messages)", c.replays); !strings.Contains(notes.String(), want) {
				t.Errorf("want %q in b's notes:\n%s", want, notes)
			}
			// a was the partition's first owner; b took it over from a.
			if a.Stats.Takeovers() != 0 || b.Stats.Takeovers() != 1 || b.Stats.Replayed() != int64(c.replays) {
				t.Errorf("takeovers: a %d, b %d (want 0 and 1); b replayed %d messages, want %d",
					a.Stats.Takeovers(), b.Stats.Takeovers(), b.Stats.Replayed(), c.replays)
			}
			st := b.Stats.Stats("alerts")
			if st.Group != "alerts" || st.Total != 1 || len(st.Owned) != 1 || st.Owned[0].Partition != "0" || st.Takeovers != 1 || st.Matches != b.Stats.Matches() {
				t.Errorf("b's stats: %+v", st)
			}
		})
	}
}
