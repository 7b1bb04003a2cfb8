package repl

import (
	"io"
	"sync"
	"time"

	"github.com/chzyer/readline"

	"github.com/sase-cep/sase/session"
)

// progressAfter is how long a statement runs before its progress line
// appears: shorter work would only flicker.
const progressAfter = time.Second

// progressEvery is how often the line is redrawn.
const progressEvery = 200 * time.Millisecond

// progressLine draws a statement's progress on the terminal's stderr, on
// one line that it redraws in place, and erases it before the session
// writes anything (through the writers wrap returns) and when the
// statement ends. Off (stderr is not a terminal) it draws nothing.
type progressLine struct {
	w     io.Writer
	on    bool
	mu    sync.Mutex
	shown bool
}

// eraseLine returns to the line's start and clears it.
const eraseLine = "\r\x1b[K"

func (p *progressLine) erase() {
	if p.shown {
		io.WriteString(p.w, eraseLine)
		p.shown = false
	}
}

// wrap returns a writer that erases the progress line before writing.
func (p *progressLine) wrap(w io.Writer) io.Writer { return erasing{p, w} }

type erasing struct {
	p *progressLine
	w io.Writer
}

func (e erasing) Write(b []byte) (int, error) {
	e.p.mu.Lock()
	defer e.p.mu.Unlock()
	e.p.erase()
	return e.w.Write(b)
}

// show draws s's progress while a statement runs; the function it returns
// stops drawing and erases the line.
func (p *progressLine) show(s *session.Session) (stop func()) {
	if !p.on {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			pr, ok := s.Progress()
			if !ok || pr.Elapsed < progressAfter {
				continue
			}
			line := pr.String()
			if width := readline.GetScreenWidth(); width > 1 && len(line) >= width {
				line = line[:width-1] // never wrap: the line is redrawn in place
			}
			p.mu.Lock()
			io.WriteString(p.w, eraseLine+line)
			p.shown = true
			p.mu.Unlock()
		}
	}()
	return func() {
		close(done)
		<-finished
		p.mu.Lock()
		p.erase()
		p.mu.Unlock()
	}
}
