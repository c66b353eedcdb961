// Command gen writes OpenRPC documents made by package handler/openrpc
// for TestOpenRPC_documents (openrpc_test.go) to validate:
//
//	go run ./bench/peers/testdata/openrpc/gen/main.go DIR
//
// run in the jetrpc module's root, so that it builds against the jetrpc
// of the work tree without bench/peers depending on the schema library.
// It writes DIR/demo.json, the document that rpc.discover answers on a
// table of handler/demo's methods (taken from a reply to the call), and
// DIR/shapes.json, the document of methods whose types have every shape
// the generator handles.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/handler/openrpc"
)

// tree is recursive.
type tree struct {
	Value    int     `json:"value"`
	Children []*tree `json:"children,omitempty"`
	Parent   *tree   `json:"parent,omitempty"`
}

// base is embedded in record.
type base struct {
	ID      string    `json:"id"`
	Created time.Time `json:"created"`
}

// record has fields of every shape, the required ones first.
type record struct {
	base
	Name  string           `json:"name"`
	Blob  handler.Raw      `json:"blob"`
	Point [2]float64       `json:"point"`
	Tree  tree             `json:"tree"`
	Extra json.RawMessage  `json:"extra,omitempty"`
	Nick  *string          `json:"nick"`
	Tags  []string         `json:"tags"`
	Attrs map[string]int   `json:"attrs"`
	Count uint32           `json:"count,omitzero"`
	Any   any              `json:"any"`
	Data  []byte           `json:"data"`
	Trees map[string]*tree `json:"trees"`
	When  *time.Time       `json:"when"`
	Skip  int              `json:"-"`
}

// gapped has an optional field before a required one.
type gapped struct {
	Cursor *string `json:"cursor"`
	Limit  int     `json:"limit"`
}

// tick is what the ticks subscription notifies.
type tick struct {
	N  int       `json:"n"`
	At time.Time `json:"at"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gen DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	if err := run(dir); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	tab := handler.NewTable()
	demo.Register(tab)
	if err := openrpc.Register(tab, openrpc.WithInfo(openrpc.Info{Title: "handler/demo", Version: "1.0.0"})); err != nil {
		return err
	}
	reply := tab.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"rpc.discover","id":1}`))
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(reply, &r); err != nil || r.Error != nil {
		return fmt.Errorf("rpc.discover: %s (%v)", reply, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "demo.json"), r.Result, 0o644); err != nil {
		return err
	}

	tab = handler.NewTable()
	errNotFound := &handler.Error{Code: 404, Message: "no such record", Data: map[string]string{"hint": "list them"}}
	handler.Register(tab, "put", func(context.Context, record) (bool, error) { return true, nil },
		handler.Summary("stores a record"), handler.Errors(handler.NewError(409, "exists")))
	handler.Register(tab, "get", func(context.Context, [1]string) (*record, error) { return nil, nil },
		handler.ParamNames("id"), handler.Errors(errNotFound))
	handler.Register(tab, "list", func(context.Context, gapped) ([]record, error) { return nil, nil })
	handler.Register(tab, "tag", func(context.Context, []string) (int, error) { return 0, nil }, handler.ParamNames("first", "second"))
	handler.Register(tab, "weigh", func(context.Context, map[string]float64) (float64, error) { return 0, nil }, handler.ParamNames("kg", "g"))
	handler.RegisterNoResult(tab, "touch", func(context.Context, struct {
		At time.Time `json:"at"`
	}) error {
		return nil
	})
	handler.RegisterSubscription(tab, "ticks", func(context.Context, struct {
		EveryMs int `json:"every_ms"`
	}, *handler.Subscription) error {
		return nil
	}, handler.Notifies[tick]())
	doc, err := openrpc.Document(tab, openrpc.WithInfo(openrpc.Info{Title: "shapes", Version: "0.1.0",
		Contact: &openrpc.Contact{Name: "jetrpc"}, License: &openrpc.License{Name: "MIT"}}))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "shapes.json"), doc, 0o644)
}
