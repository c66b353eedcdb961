package main

import (
	"fmt"
	"log/slog"

	"github.com/jetrpc/jetrpc/handler/natsbroker"
	"github.com/jetrpc/jetrpc/handler/topics"
)

// topicsOf returns the topics of jetrpc serve: shared with the other
// nodes on the NATS server at url (--broker), or this node's alone when
// url is empty. close ends the broker's connection; connected reports
// its state (nil without a broker).
func topicsOf(url string, logger *slog.Logger) (h *topics.Topics, connected func() bool, close func(), err error) {
	if url == "" {
		return topics.New(nil, logger), nil, func() {}, nil
	}
	b, err := natsbroker.Connect(url, natsbroker.WithLogger(logger), natsbroker.WithName("jetrpc serve"))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("--broker: %w", err)
	}
	return topics.New(b, logger), b.Connected, b.Close, nil
}
