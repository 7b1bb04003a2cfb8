package serve_test

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/sase-cep/sase/internal/testkit"
	"github.com/sase-cep/sase/serve"
)

// requireBrowser is the environment variable that makes TestBrowser fail
// rather than skip when no Chromium is found: .ci/run sets it, having
// installed Debian's chromium.
const requireBrowser = "SASE_REQUIRE_BROWSER"

// chromium is the path of a Chromium (or Chrome) on PATH, or "".
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	return ""
}

// TestBrowser opens the dashboard in headless Chromium on a server with a
// query on a TCP stream: the query's match count and its latest match
// come on the page as events arrive, a statement run from the page's
// form starts a query, and the page, under that workload, makes a
// non-empty PNG screenshot. The page throws no JavaScript exception.
func TestBrowser(t *testing.T) {
	t.Parallel() // its own server and browser: it mostly waits on Chromium's start
	path := chromium()
	if path == "" {
		if os.Getenv(requireBrowser) != "" {
			t.Fatalf("no chromium, chromium-browser or google-chrome on PATH, and %s is set", requireBrowser)
		}
		t.Skipf("no chromium, chromium-browser or google-chrome on PATH: the dashboard is not tested in a browser (apt-get install chromium; %s=1 makes this a failure)", requireBrowser)
	}
	_, hs, addr := liveServer(t, serve.Config{}, pairs)

	// Chromium's start alone took 10–12 s on this 2-core machine at load
	// 20 (go test runs packages side by side): the test's whole bound is
	// generous, each wait on the page has its own.
	ctx, cancel := context.WithTimeout(context.Background(), 6*testkit.Deadline)
	defer cancel()
	// Root runs as CI does, hence no sandbox; the machine's network is
	// closed, hence no background networking (in the defaults).
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-quic", true),
		chromedp.WindowSize(1280, 900),
	)
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	var mu sync.Mutex
	var thrown []string
	ctx, cancelTab := chromedp.NewContext(ctx, chromedp.WithListener(func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			mu.Lock()
			d := e.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			thrown = append(thrown, fmt.Sprintf("%s:%d:%d: %s", d.URL, d.LineNumber+1, d.ColumnNumber+1, msg))
			mu.Unlock()
		}
	}))
	defer cancelTab()

	// until waits for a JavaScript condition on the page.
	until := func(what, cond string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(testkit.Deadline))); err != nil {
			text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
			t.Fatalf("%s: %v; the page:\n%s", what, err, text)
		}
	}
	const row1 = `document.querySelector("#queries tbody tr")`
	if err := chromedp.Do(ctx,
		chromedp.Navigate(hs.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS("#queries tbody tr")),
		chromedp.Click(chromedp.CSS("#queries tbody tr")), // follows query 1
	); err != nil {
		t.Fatalf("opening the dashboard with %s: %v", path, err)
	}
	until("the page follows query 1", `document.getElementById("follow-state").textContent === "(following)"`)

	testkit.Send(t, addr, events(3)+"A,100,9\n"+tick)
	waitQuery(t, hs, 7, 3)
	until("query 1's 3 matches on the page", row1+`.cells[4].textContent === "3"`)
	until("query 1's latest match on the page", `document.querySelector("#matches tbody tr")?.cells[1].textContent === '{"a.x":2,"b.x":2}'`)
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelector("#matches tbody").rows.length`)); err != nil || n != 3 {
		t.Errorf("the latest matches table has %d rows (%v), want 3", n, err)
	}

	const stmt2 = "PATTERN SEQ(B b, A a) FROM s WITHIN 20 RETURN b.x, a.x;"
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.ID("stmt"), stmt2),
		chromedp.Click(chromedp.CSS("#run button")),
	); err != nil {
		t.Fatal(err)
	}
	until("the form's answer", `document.getElementById("answer").textContent.includes("query 2 started")`)
	until("query 2 on the page", `(r => r && r.cells[2].textContent === "running")(document.querySelectorAll("#queries tbody tr")[1])`)
	if qs := queries(t, hs); len(qs) != 2 || qs[1].State != "running" || qs[1].Text != strings.TrimSuffix(stmt2, ";") {
		t.Errorf("after the form, the queries are %+v", qs)
	}

	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "dashboard.png")
	if err := os.WriteFile(file, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Size() == 0 {
		t.Fatalf("the screenshot %s: %v", file, err)
	}
	img, err := png.DecodeConfig(bytes.NewReader(shot))
	if err != nil || img.Width < 1280 || img.Height == 0 {
		t.Errorf("the screenshot is not a page-wide PNG: %+v, %v", img, err)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, e := range thrown {
		t.Errorf("JavaScript exception %d: %s", i+1, e)
	}
}
