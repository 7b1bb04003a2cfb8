package source

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sase-cep/sase/event"
)

// TestOpen opens each built-in scheme and checks what it is.
func TestOpen(t *testing.T) {
	ctx := context.Background()
	dir, _ := filepath.Abs(filepath.Join("..", "testdata", "source"))
	want, err := Load(filepath.Join(dir, "trades.csv"), "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		url  string
		opts []OpenOption
		live bool
	}{
		{url: filepath.Join(dir, "trades.csv")},
		{url: "file://" + filepath.Join(dir, "trades.jsonl")},
		{url: "FILE://localhost" + filepath.Join(dir, "trades.csv")},
		{url: "-", opts: []OpenOption{WithStdin(strings.NewReader("type,ts,price,symbol\n"))}, live: true},
		{url: filepath.Join(dir, "trades.csv"), opts: []OpenOption{Following()}, live: true},
	} {
		src, err := Open(ctx, tt.url, tt.opts...)
		if err != nil {
			t.Fatalf("%s: %v", tt.url, err)
		}
		if src.Live() != tt.live {
			t.Errorf("%s: Live() = %v", tt.url, src.Live())
		}
		if tt.live {
			src.Close()
			continue
		}
		s, err := Collect(ctx, src)
		if err != nil || dump(s) != dump(want) || s.Live {
			t.Errorf("%s: %v\n%s", tt.url, err, dump(s))
		}
	}

	src, err := Open(ctx, "tcp://127.0.0.1:0", WithName("feed"))
	if err != nil {
		t.Fatal(err)
	}
	if !src.Live() || !strings.HasPrefix(src.URL(), "tcp://127.0.0.1:") || strings.HasSuffix(src.URL(), ":0") {
		t.Errorf("tcp: live %v, URL %s", src.Live(), src.URL())
	}
	src.Close() // unread: closes the listener
	if err := src.Read(ctx, func([]*event.Event) bool { return true }); err != nil {
		t.Errorf("Read after Close: %v", err)
	}

	for _, tt := range []struct {
		url  string
		opts []OpenOption
		want string
	}{
		{"nats://localhost:4222/events", nil, `unknown source scheme nats:// in "nats://localhost:4222/events" (known: file://, tcp://`},
		{"file://data.csv", nil, "a file URL names an absolute path on this machine"},
		{"-", []OpenOption{Following()}, "FOLLOW reads a file"},
		{"tcp://127.0.0.1:0", []OpenOption{WithFormat("xml")}, `unknown format "xml"`},
		{filepath.Join(dir, "missing.csv"), nil, "no such file"},
	} {
		if _, err := Open(ctx, tt.url, tt.opts...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.url, err, tt.want)
		}
	}
}

// TestRegister adds a scheme, as a nats package would, built on
// NewLineSource.
func TestRegister(t *testing.T) {
	Register("test+lines", func(_ context.Context, u *url.URL, c Config) (Source, error) {
		msgs := strings.Split(u.Query().Get("msgs"), "|")
		return NewLineSource(u.String(), c, func(_ context.Context, feed func(Producer) error) error {
			for _, m := range msgs { // one producer per message, each a whole line
				if err := feed(Producer{Name: c.Name, R: strings.NewReader(m)}); err != nil {
					return err
				}
			}
			return nil
		}, nil)
	})
	defer func() {
		schemesMu.Lock()
		delete(schemes, "test+lines")
		schemesMu.Unlock()
	}()
	src, err := Open(context.Background(), `test+lines://x?msgs={"type":"A","ts":1}|{"type":"B","ts":2}`, WithFormat("jsonl"), WithName("bus"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Collect(context.Background(), src)
	if err != nil || dump(s) != "0 A@1\n1 B@2\n" || !src.Live() || s.Live {
		t.Errorf("%v: %q", err, dump(s))
	}
	defer func() {
		if recover() == nil {
			t.Error("a second Register of a scheme did not panic")
		}
	}()
	Register("TEST+lines", func(context.Context, *url.URL, Config) (Source, error) { return nil, nil })
}

// TestPathIsNotAScheme: only name:// is a scheme; anything else is a path.
func TestPathIsNotAScheme(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a:b.csv")
	if err := os.WriteFile(path, []byte("type,ts\nA,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := Collect(context.Background(), src); err != nil || len(s.Events) != 1 {
		t.Errorf("%v", err)
	}
	for s, want := range map[string]bool{"tcp": true, "nats": true, "a+b.c-d": true, "1x": false, "": false, "c:/x": false} {
		if isScheme(s) != want {
			t.Errorf("isScheme(%q) = %v", s, !want)
		}
	}
}
