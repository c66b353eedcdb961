package handler_test

// Tests of the method table (table.go): what it reports, and sealing at
// the first Dispatch.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/handler"
)

func TestTable_methodsInfo(t *testing.T) {
	tab := handler.NewTable()
	type P struct {
		Minuend    int `json:"minuend"`
		Subtrahend int `json:"subtrahend"`
	}
	handler.Register(tab, "sub", func(_ context.Context, p P) (int, error) { return p.Minuend - p.Subtrahend, nil },
		handler.Inline(), handler.Description("difference"))
	handler.Register(tab, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil },
		handler.ParamNames("a", "b"), handler.Require("math"), handler.Cost(3), handler.MaxConcurrent(2), handler.Timeout(time.Second))
	got := fmt.Sprint(tab.Methods())
	want := `[{add  [a b] false false [math] 3 2 1s  [2]int int []    <nil> false  []} {sub difference [minuend subtrahend] true false [] 1 0 0s  handler_test.P int []    <nil> false  []}]`
	if got != want {
		t.Fatalf("Methods() = %s, want %s", got, want)
	}
	if found, inline := tab.Lookup("sub"); !found || !inline {
		t.Fatal("Lookup(sub)")
	}
	if found, _ := tab.Lookup("nope"); found {
		t.Fatal("Lookup(nope)")
	}
}

// Regression from a review of the push API: sealing the table raced with a registration in progress.
//
// Registering while the first Dispatch seals the table is either done
// before it or refused with ErrSealed, never a data race (go test -race).
func TestTable_registerRacesFirstDispatch(t *testing.T) {
	tab := handler.NewTable()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := range 200 {
			err := registerErr(func() {
				handler.Register(tab, fmt.Sprint("m", i), func(context.Context, [1]int) (int, error) { return 1, nil })
			})
			if err != nil && !errors.Is(err, handler.ErrSealed) {
				t.Errorf("register: %v", err)
			}
		}
	}()
	go func() {
		defer wg.Done()
		for range 200 {
			tab.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"m5","params":[1],"id":1}`))
		}
	}()
	wg.Wait()
}
