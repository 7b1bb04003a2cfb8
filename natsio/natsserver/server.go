// Package natsserver runs a single-node NATS server with JetStream in
// this process: `sase nats serve`, and the tests of package natsio.
package natsserver

import (
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Start starts a server on host:port (port 0: a free one, which URL
// names) storing its streams under dir, and waits until it accepts
// connections.
func Start(host string, port int, dir string) (*server.Server, error) {
	if port == 0 {
		port = server.RANDOM_PORT
	}
	s, err := server.NewServer(&server.Options{
		Host:      host,
		Port:      port,
		JetStream: true,
		StoreDir:  dir,
		NoSigs:    true,
		NoLog:     true,
	})
	if err != nil {
		return nil, fmt.Errorf("NATS server: %w", err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return nil, fmt.Errorf("NATS server on %s:%d did not start in 10 s", host, port)
	}
	return s, nil
}
