// Package natsio connects sase to NATS JetStream: the nats:// source
// (LISTEN 'nats://host:port/STREAM'), the nats:// sink (SET output =
// 'nats://host:port/MATCHES') and what `sase nats` needs to create and
// feed a stream. It registers both schemes from its init: a program
// that wants them imports it for its side effect, as cmd/sase does.
//
// # Events
//
// Each message of the stream is one event or a batch of them, a line
// each: JSON Lines objects (the default), or with FORMAT csv CSV rows
// whose header row is the message's Sase-Csv-Header header. Publish
// packs up to PublishConfig.Batch lines of one partition in a message:
// the server's cost is per message, several times sase's per event. An
// event's seq is its message's stream sequence and its index there
// (EventSeq), so a replay numbers the events as the first reading did.
// A message with nothing but the timestamp key ({"ts": 120}) is a tick:
// it says time has passed, carries no event, and is counted.
//
// # Matches
//
// The sink publishes each match as one JSON Lines message (the CLI's
// output contract) on matches.<query>.<partition>. Its Nats-Msg-Id is the
// query's name and the seqs of the match's events, so the stream's
// duplicate window drops a match published twice; its Sase-Position
// header is the seq of the event that completed it (in a group, of the
// event whose arrival released it) and its index among that event's
// matches. Publishing waits for the server's
// acknowledgements (PubAck) before a query reports its end: a match is
// stored exactly once. Standard output gives no such guarantee: a query
// run again after a crash writes again what it wrote before.
//
// # Groups
//
// LISTEN ... WITH (group = 'g') makes the instances that run a script
// share the stream's partitions, each query running per partition (see
// RunGroup and group.go). The server itself is not here: package
// natsserver runs one for the tests and for `sase nats serve`, which
// only a binary built with -tags natsserver has.
package natsio

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Header names.
const (
	HeaderCSV      = "Sase-Csv-Header" // a CSV message's header row
	HeaderPosition = "Sase-Position"   // a match's completing (or releasing) seq and index: "17.0"
)

// DefaultPort is NATS's.
const DefaultPort = "4222"

// Target is a parsed nats://host:port/NAME URL.
type Target struct {
	Server string // nats://host:port
	Name   string // the stream
	Query  url.Values
}

// ParseURL reads nats://host:port/NAME (the port defaults to 4222).
func ParseURL(u *url.URL) (Target, error) {
	name := strings.Trim(u.Path, "/")
	if !strings.EqualFold(u.Scheme, "nats") || u.Host == "" || name == "" || strings.ContainsAny(name, "/.*> ") {
		return Target{}, fmt.Errorf("%s: a NATS URL names a server and a stream, as nats://127.0.0.1:4222/EVENTS", u.Redacted())
	}
	host := u.Host
	if u.Port() == "" {
		host += ":" + DefaultPort
	}
	return Target{Server: "nats://" + host, Name: name, Query: u.Query()}, nil
}

// Connect connects to t's server and returns its JetStream context. The
// connection reconnects for as long as it is used; a server that cannot
// be reached at first is an error at once.
func Connect(ctx context.Context, server, name string, opts ...jetstream.JetStreamOpt) (*nats.Conn, jetstream.JetStream, error) {
	nc, err := nats.Connect(server, nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(250*time.Millisecond), nats.Timeout(2*time.Second))
	if err != nil {
		return nil, nil, fmt.Errorf("cannot reach the NATS server %s: %w", server, err)
	}
	js, err := jetstream.New(nc, opts...)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

// stream looks a stream up, with a message saying what to do when it is
// missing.
func stream(ctx context.Context, js jetstream.JetStream, server, name string) (jetstream.Stream, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("no stream %s on %s (sase nats init creates one)", name, server)
	}
	if err != nil {
		return nil, fmt.Errorf("stream %s on %s: %w", name, server, err)
	}
	return st, nil
}
