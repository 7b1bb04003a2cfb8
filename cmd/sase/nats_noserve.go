//go:build !natsserver

package main

import (
	"context"
	"errors"
)

// natsServe is missing from a default build: see nats_serve.go.
func natsServe(context.Context, []string) error {
	return errors.New("this sase was built without a NATS server (it would double the binary): build one with go build -tags natsserver ./cmd/sase, or run nats-server -js")
}
