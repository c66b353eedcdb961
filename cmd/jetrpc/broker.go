package main

import (
	"fmt"
	"log/slog"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/natsbroker"
)

// topicsOf returns the topics of jetrpc serve: shared with the other
// nodes on the NATS server at url (--broker), or this node's alone when
// url is empty. close ends the broker's connection; connected reports
// its state (nil without a broker).
func topicsOf(url string, logger *slog.Logger) (h *handler.Topics, connected func() bool, close func(), err error) {
	if url == "" {
		return handler.NewTopics(nil, logger), nil, func() {}, nil
	}
	b, err := natsbroker.Connect(url, natsbroker.WithLogger(logger), natsbroker.WithName("jetrpc serve"))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("--broker: %w", err)
	}
	return handler.NewTopics(b, logger), b.Connected, b.Close, nil
}
