package source

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
)

// Listen is LISTEN 'tcp://host:port': a live stream fed by the producers
// that connect, each sending newline-delimited events (a CSV producer its
// header first). Their lines are merged into one stream in arrival order,
// so a producer whose timestamps lag behind the stream's has those lines
// rejected, or with a slack reordered (late beyond it). A producer
// closing its connection does not end the stream; only Close does, or
// with on_error = 'stop' a producer's bad line. A
// last line that a connection's end cuts off (no newline) is rejected.
//
// Without a host the listener binds loopback (127.0.0.1); 0.0.0.0 binds
// every IPv4 interface, and [::] every interface, IPv6 and IPv4; an
// address beyond loopback is said so on errs. Port 0 picks a free port,
// which Source then names.
func Listen(name, addr, format string, opts Options, errs io.Writer) (*Live, error) {
	c := newConfig(WithName(name), WithFormat(format), WithOptions(opts), WithErrors(errs))
	src, err := timedOpen(listen(addr, c))(c)
	if err != nil {
		return nil, err
	}
	return NewLive(name, src), nil
}

// openTCP is the tcp scheme's Opener.
func openTCP(_ context.Context, u *url.URL, c Config) (Source, error) {
	if c.Name == "" {
		c.Name = "listen"
	}
	return listen(u.String(), c)
}

func listen(addr string, c Config) (Source, error) {
	if c.Errors == nil {
		c.Errors = io.Discard
	}
	if _, err := formatOf("-", c.Format); err != nil { // before the port is taken
		return nil, err
	}
	network, hostPort, err := listenAddr(addr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen(network, hostPort)
	if err != nil {
		return nil, err
	}
	url := "tcp://" + ln.Addr().String()
	if where := exposure(network, ln.Addr()); where != "" {
		fmt.Fprintf(c.Errors, "%s: %s binds beyond loopback: it accepts connections on %s\n", c.Name, url, where)
	}
	return newLineSource(url, c, func(ctx context.Context, feed func(Producer) error) error {
		return serve(ctx, ln, c, feed)
	}, func() { ln.Close() })
}

// listenAddr turns tcp://host:port (or host:port, or :port) into the
// network and address to listen on. 0.0.0.0 is IPv4's wildcard, so it
// binds IPv4 only (Go's "tcp" would bind IPv6 too).
func listenAddr(addr string) (network, hostPort string, err error) {
	hp := strings.TrimPrefix(addr, "tcp://")
	host, port, err := net.SplitHostPort(hp)
	if err != nil || strings.Contains(hp, "/") {
		return "", "", fmt.Errorf("LISTEN wants an address like 'tcp://127.0.0.1:7000', got %q", addr)
	}
	network = "tcp"
	switch host {
	case "":
		host = "127.0.0.1"
	case "0.0.0.0":
		network = "tcp4"
	}
	return network, net.JoinHostPort(host, port), nil
}

// exposure says where a listener beyond loopback accepts connections, or
// "" for loopback.
func exposure(network string, a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	switch {
	case !ok || ta.IP.IsLoopback():
		return ""
	case ta.IP.IsUnspecified() && network == "tcp4":
		return "every IPv4 interface (not IPv6: tcp://[::]:port takes both)"
	case ta.IP.IsUnspecified():
		return "every interface, IPv6 and IPv4"
	}
	return ta.IP.String() + ", which is not loopback: other machines can connect"
}

// serve accepts producers until ctx is done, then closes the listener and
// the connections and waits for their readers.
func serve(ctx context.Context, ln net.Listener, c Config, feed func(Producer) error) error {
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
		var conn net.Conn
		conn, err = ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				err = nil // ended by Close
			}
			break
		}
		mu.Lock()
		conns[conn] = true
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			who := c.Name + "/" + conn.RemoteAddr().String()
			fmt.Fprintf(c.Errors, "%s: connected\n", who)
			feed(Producer{Name: who, R: conn, Cut: func() string { return "the connection closed" }, Drop: func() { conn.Close() }}) // reported; the others go on
			mu.Lock()
			delete(conns, conn)
			mu.Unlock()
			conn.Close()
			fmt.Fprintf(c.Errors, "%s: disconnected\n", who)
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
