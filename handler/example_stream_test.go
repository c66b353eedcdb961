package handler_test

import (
	"context"
	"fmt"
	"iter"

	"github.com/jetrpc/jetrpc/handler"
)

// A streamed method yields its result's elements one by one: the engine
// sends them as they come (HTTP chunked, WebSocket fragments, stream
// writes), pausing the method while the client reads slowly. Dispatch,
// which has no transport to stream to, builds the array whole.
func ExampleRegisterStream() {
	t := handler.NewTable()
	type LogParams struct {
		From int `json:"from"`
		N    int `json:"n"`
	}
	handler.RegisterStream(t, "logs", func(ctx context.Context, p LogParams) iter.Seq2[string, error] {
		return func(yield func(string, error) bool) {
			for i := p.From; i < p.From+p.N; i++ {
				if ctx.Err() != nil {
					yield("", ctx.Err()) // ends the result, flagged as failed if it has begun
					return
				}
				if !yield(fmt.Sprintf("line %d", i), nil) {
					return // the client went
				}
			}
		}
	})
	fmt.Printf("%s\n", t.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"logs","params":{"from":7,"n":3},"id":1}`)))
	// Output:
	// {"jsonrpc":"2.0","result":["line 7","line 8","line 9"],"id":1}
}

// A large text streams as one JSON string, its pieces escaped as they
// come; StreamEnvelope puts it inside the object a protocol expects.
func ExampleRegisterTextStream() {
	t := handler.NewTable()
	handler.RegisterTextStream(t, "read", func(ctx context.Context, p [1]string) iter.Seq2[string, error] {
		return func(yield func(string, error) bool) {
			for _, piece := range []string{"first line\n", "second \"quoted\" line\n", "é"} {
				if !yield(piece, nil) {
					return
				}
			}
		}
	}, handler.StreamEnvelope(`{"contents":[{"uri":"file:///notes","text":`, `}]}`))
	fmt.Printf("%s\n", t.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"read","params":["file:///notes"],"id":1}`)))
	// Output:
	// {"jsonrpc":"2.0","result":{"contents":[{"uri":"file:///notes","text":"first line\nsecond \"quoted\" line\né"}]},"id":1}
}
