package output

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// SinkConfig is what Open hands a scheme's SinkOpener.
type SinkConfig struct {
	// Query names the query whose rows the sink receives, stably: the
	// same script run twice names its queries alike, so that a sink can
	// tell a match published twice (by a replay, or a standby) apart.
	Query  string
	Schema Schema
	// Errors is where a sink reports what it could not deliver, as it
	// happens (nil: nowhere); its Finish returns it too.
	Errors io.Writer
}

// A SinkOpener opens the writer a URL of its scheme names; the writer's
// Finish releases what it holds.
type SinkOpener func(ctx context.Context, u *url.URL, c SinkConfig) (Writer, error)

var (
	sinksMu sync.RWMutex
	sinks   = map[string]SinkOpener{}
)

// RegisterSink makes Open hand URLs of scheme (case-insensitive, without
// "://") to open, as source.Register does for inputs: a package that
// publishes results somewhere (nats://) calls it from its init. It panics
// if the scheme is registered already.
func RegisterSink(scheme string, open SinkOpener) {
	scheme = strings.ToLower(scheme)
	sinksMu.Lock()
	defer sinksMu.Unlock()
	if _, dup := sinks[scheme]; dup || open == nil || scheme == "" {
		panic("output: RegisterSink of " + scheme + ":// twice, or without an opener")
	}
	sinks[scheme] = open
}

// CheckSink reports whether Open knows rawURL's scheme, so that a setting
// naming a sink fails when it is set rather than when a query starts.
func CheckSink(rawURL string) (*url.URL, SinkOpener, error) {
	scheme, _, ok := strings.Cut(rawURL, "://")
	sinksMu.RLock()
	open := sinks[strings.ToLower(scheme)]
	sinksMu.RUnlock()
	if !ok || open == nil {
		return nil, nil, fmt.Errorf("output %q: not a sink URL (known: %s)", rawURL, knownSinks())
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, nil, err
	}
	return u, open, nil
}

// Open opens the sink rawURL names.
func Open(ctx context.Context, rawURL string, c SinkConfig) (Writer, error) {
	u, open, err := CheckSink(rawURL)
	if err != nil {
		return nil, err
	}
	return open(ctx, u, c)
}

func knownSinks() string {
	sinksMu.RLock()
	defer sinksMu.RUnlock()
	names := make([]string, 0, len(sinks))
	for s := range sinks {
		names = append(names, s+"://")
	}
	if len(names) == 0 {
		return "none registered"
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
