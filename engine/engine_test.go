package engine_test

// Tests of New (engine.go).

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
)

// TestNew_refusesTablePool: the engine's pool runs whole messages, whose
// batches wait on the table's pool: sharing one pool could deadlock, so
// New refuses it.
func TestNew_refusesTablePool(t *testing.T) {
	tab := handler.NewTable()
	defer func() {
		if v := recover(); v == nil || !strings.Contains(fmt.Sprint(v), "table's own pool") {
			t.Fatalf("New with the table's pool: %v", v)
		}
	}()
	engine.New(tab, engine.WithWorkers(tab.Workers()))
}
