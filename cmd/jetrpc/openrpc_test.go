package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
)

// TestRunOpenRPC_bundledDocument: jetrpc openrpc prints every method of
// jetrpc serve, their params and result types as a reader of
// handler/demo and access.go expects them (written by hand), with the
// corrections of discoverOptions.
func TestRunOpenRPC_bundledDocument(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := runOpenRPC(nil, &out, &errOut); err != nil {
		t.Fatalf("%v: %s", err, errOut.String())
	}
	if !strings.HasPrefix(out.String(), "{\n  \"openrpc\": \"1.3.2\",") || !strings.HasSuffix(out.String(), "}\n") {
		t.Fatalf("not an indented document:\n%s", out.String())
	}
	var doc struct {
		OpenRPC string `json:"openrpc"`
		Info    struct {
			Title, Version string
		} `json:"info"`
		Methods []struct {
			Name   string `json:"name"`
			Params []struct {
				Name     string          `json:"name"`
				Required bool            `json:"required"`
				Schema   json.RawMessage `json:"schema"`
			} `json:"params"`
			ParamStructure string `json:"paramStructure"`
			Result         struct {
				Schema json.RawMessage `json:"schema"`
			} `json:"result"`
			Notification *struct {
				Params []struct {
					Schema json.RawMessage `json:"schema"`
				} `json:"params"`
			} `json:"x-notification"`
		} `json:"methods"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, out.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(compact.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Info.Title != "jetrpc" || doc.Info.Version == "" {
		t.Errorf("info %+v", doc.Info)
	}
	// name(param schema, …) structure → result schema; ! marks a required param.
	want := []string{
		`add(a {"type":"integer"}!, b {"type":"integer"}!) by-position → {"type":"integer"}`,
		`admin_stats() → {"$ref":"#/components/schemas/adminStats"}`,
		`clock_subscribe(interval_ms {"type":"integer"}!) either → {"type":"string"}`,
		`clock_unsubscribe(id {"type":"string"}!) by-position → {"type":"boolean"}`,
		`echo() either → true`,
		`fail() either → {"properties":{},"type":"object"}`,
		`get_data() → true`,
		`notify_hello() either → {"type":"null"}`,
		`notify_sum() either → {"type":"null"}`,
		`sleep(ms {"type":"integer"}!) either → {"type":"integer"}`,
		`subtract(minuend {"type":"number"}!, subtrahend {"type":"number"}!) either → {"type":"number"}`,
		`sum(numbers... {"type":"number"}) by-position → {"type":"number"}`,
		`topic_publish(name {"type":"string"}!, payload true!) either → {"type":"integer"}`,
		`topic_subscribe(topic {"type":"string"}!) by-position → {"type":"string"}`,
		`topic_unsubscribe(id {"type":"string"}!) by-position → {"type":"boolean"}`,
		`update() either → {"type":"null"}`,
	}
	var got []string
	for _, m := range doc.Methods {
		var params []string
		for _, p := range m.Params {
			s := p.Name + " " + string(p.Schema)
			if p.Required {
				s += "!"
			}
			params = append(params, s)
		}
		sig := m.Name + "(" + strings.Join(params, ", ") + ")"
		if m.ParamStructure != "" {
			sig += " " + m.ParamStructure
		}
		got = append(got, sig+" → "+string(m.Result.Schema))
		if m.Name == "clock_subscribe" {
			if n := m.Notification; n == nil || len(n.Params) != 2 || string(n.Params[1].Schema) != `{"type":"integer","minimum":1}` {
				t.Errorf("clock_subscribe x-notification: %+v", n)
			}
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("methods:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var stats struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(doc.Components.Schemas["adminStats"], &stats); err != nil {
		t.Fatalf("adminStats: %v", err)
	}
	if strings.Join(stats.Required, " ") != "connections goroutines uptime_seconds caller" ||
		string(stats.Properties["uptime_seconds"]) != `{"type":"number"}` || len(stats.Properties) != 4 {
		t.Errorf("adminStats: %s", doc.Components.Schemas["adminStats"])
	}
}

// TestRunOpenRPC_isDiscover: the printed document (--compact) is what
// rpc.discover answers on the table of jetrpc serve.
func TestRunOpenRPC_isDiscover(t *testing.T) {
	var out bytes.Buffer
	if err := runOpenRPC([]string{"--compact"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	tab := handler.NewTable()
	if err := registerServed(tab, func() int { return 3 }, handler.NewTopics(nil, nil), true); err != nil {
		t.Fatal(err)
	}
	reply := tab.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"rpc.discover","id":1}`))
	want := `{"jsonrpc":"2.0","result":` + strings.TrimSuffix(out.String(), "\n") + `,"id":1}`
	if string(reply) != want {
		t.Fatalf("rpc.discover:\n%s\nwant\n%s", reply, want)
	}
	off := handler.NewTable()
	if err := registerServed(off, func() int { return 0 }, handler.NewTopics(nil, nil), false); err != nil {
		t.Fatal(err)
	}
	if found, _ := off.Lookup("rpc.discover"); found {
		t.Error("rpc.discover registered without discover")
	}
}

// TestRunOpenRPC_usage: -h prints the usage to stdout; an argument is a
// usage error; the usage lists every flag once.
func TestRunOpenRPC_usage(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := runOpenRPC([]string{"-h"}, &out, &errOut); err != nil || !strings.Contains(out.String(), "usage: jetrpc openrpc") ||
		!strings.Contains(out.String(), "--compact") {
		t.Errorf("-h: %v\n%s", err, out.String())
	}
	out.Reset()
	err := runOpenRPC([]string{"extra"}, &out, &errOut)
	if !errors.As(err, new(errUsage)) || out.Len() != 0 || !strings.Contains(errOut.String(), `unexpected argument "extra"`) {
		t.Errorf("extra argument: %v, stdout %q, stderr %q", err, out.String(), errOut.String())
	}
	fs, _ := newOpenRPCFlags()
	seen := map[string]int{}
	for _, g := range openrpcUsage.groups {
		for _, name := range g.names {
			seen[name]++
		}
	}
	fs.VisitAll(func(f *flag.Flag) {
		if seen[f.Name] != 1 {
			t.Errorf("flag %q listed %d times in the usage", f.Name, seen[f.Name])
		}
	})
}
