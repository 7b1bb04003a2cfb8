package repl

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"

	"github.com/sase-cep/sase/query"
)

// The history file keeps one entry per statement or command: a statement
// typed over several lines is stored as one line that runs the same, so
// that Up brings back the whole statement. The file may hold file names,
// addresses and values, so only its owner can read it (mode 0600, also
// for a file made by an older sase).

// historyLimit is how many entries the file keeps.
const historyLimit = 1000

// history appends entries to the history file.
type history struct {
	f *os.File
}

// openHistory reads the entries of the history file at path, oldest
// first, creating the file if need be and making it private; a file
// grown past twice historyLimit is cut to the last historyLimit.
func openHistory(path string) (*history, []string, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, nil, err
	}
	var entries []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line := sc.Text(); strings.TrimSpace(line) != "" {
			entries = append(entries, line)
		}
	}
	if err := sc.Err(); err != nil {
		f.Close()
		return nil, nil, err
	}
	if len(entries) > 2*historyLimit {
		entries = entries[len(entries)-historyLimit:]
		f.Close()
		if f, err = rewriteHistory(path, entries); err != nil {
			return nil, nil, err
		}
	}
	return &history{f}, entries, nil
}

// rewriteHistory replaces the file with entries, through a private
// temporary file renamed over it.
func rewriteHistory(path string, entries []string) (*os.File, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriter(tmp) // CreateTemp makes the file mode 0600
	for _, e := range entries {
		w.WriteString(e)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, err
	}
	tmp.Close()
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return nil, err
	}
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
}

func (h *history) add(entry string) error {
	_, err := h.f.WriteString(entry + "\n")
	return err
}

func (h *history) close() error { return h.f.Close() }

// historyEntry joins a statement typed over several lines into one line
// that runs the same: line breaks between tokens become a space, and line
// comments, which would swallow what follows them, are dropped. A string
// that itself spans lines is kept as it is.
func historyEntry(text string) string {
	c, err := query.Registered()
	if err != nil {
		return text // no compiler, no statement run: as typed
	}
	var b strings.Builder
	prev := 0
	for _, sp := range c.TokenSpans(text) {
		b.WriteString(joinGap(text[prev:sp.Start]))
		b.WriteString(text[sp.Start:sp.End])
		prev = sp.End
	}
	b.WriteString(joinGap(text[prev:]))
	return strings.TrimSpace(b.String())
}

// joinGap joins the text between two tokens, which the lexer skipped:
// blanks, complete block comments and line comments.
func joinGap(gap string) string {
	var b strings.Builder
	for i := 0; i < len(gap); {
		switch rest := gap[i:]; {
		case strings.HasPrefix(rest, "/*"):
			end := strings.Index(rest[2:], "*/") + 4
			if end < 4 {
				end = len(rest)
			}
			b.WriteString(rest[:end])
			i += end
		case strings.HasPrefix(rest, "--"):
			i += len(rest)
			if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
				i -= len(rest) - nl
			}
		case strings.ContainsRune(" \t\r\n\f", rune(rest[0])):
			n := len(rest) - len(strings.TrimLeft(rest, " \t\r\n\f"))
			if strings.ContainsAny(rest[:n], "\r\n") {
				if !strings.HasSuffix(b.String(), " ") {
					b.WriteByte(' ')
				}
			} else {
				b.WriteString(rest[:n])
			}
			i += n
		default:
			b.WriteByte(rest[0]) // a character the lexer could not read
			i++
		}
	}
	return b.String()
}
