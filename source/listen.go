package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
)

// Listen is LISTEN 'tcp://host:port': a live stream fed by the producers
// that connect, each sending newline-delimited events (a CSV producer its
// header first). Their lines are merged into one stream in arrival order,
// so a producer whose timestamps lag behind the stream's has those lines
// rejected. A producer closing its connection does not end the stream;
// only Close does. Without a host the listener binds loopback (127.0.0.1);
// port 0 picks a free port, which Source then names.
func Listen(name, addr, format string, opts Options, errs io.Writer) (*Live, error) {
	format, err := formatOf("-", format) // csv by default
	if err != nil {
		return nil, err
	}
	hostPort, err := listenAddr(addr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", hostPort)
	if err != nil {
		return nil, err
	}
	l := newLive(name, "tcp://"+ln.Addr().String(), format, opts, errs)
	l.run = func(ctx context.Context) error { return l.serve(ctx, ln) }
	return l, nil
}

// listenAddr turns tcp://host:port (or host:port, or :port) into host:port.
func listenAddr(addr string) (string, error) {
	hp := strings.TrimPrefix(addr, "tcp://")
	host, port, err := net.SplitHostPort(hp)
	if err != nil || strings.Contains(hp, "/") {
		return "", fmt.Errorf("LISTEN wants an address like 'tcp://127.0.0.1:7000', got %q", addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// serve accepts producers until ctx is done, then closes the listener and
// the connections and waits for their readers.
func (l *Live) serve(ctx context.Context, ln net.Listener) error {
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	var wg sync.WaitGroup
	stop := context.AfterFunc(ctx, func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	defer stop()
	var err error
	for {
		var c net.Conn
		c, err = ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				err = nil // ended by Close
			}
			break
		}
		mu.Lock()
		conns[c] = true
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			who := l.name + "/" + c.RemoteAddr().String()
			fmt.Fprintf(l.errs, "%s: connected\n", who)
			ferr := l.feed(who, c)
			mu.Lock()
			delete(conns, c)
			mu.Unlock()
			c.Close()
			var stop stopError
			switch {
			case errors.As(ferr, &stop):
				if l.b.opts.StopOnError {
					l.Close() // on_error = 'stop' stops the stream, not just this producer
				}
			case ferr != nil && ctx.Err() == nil:
				fmt.Fprintf(l.errs, "%s: %v\n", who, ferr)
			}
			fmt.Fprintf(l.errs, "%s: disconnected\n", who)
		}()
	}
	ln.Close()
	stop()
	mu.Lock()
	for c := range conns {
		c.Close()
	}
	mu.Unlock()
	wg.Wait()
	return err
}
