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
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/auth"
	"github.com/jetrpc/jetrpc/handler/topics"
)

// TestRunOpenRPC_bundledDocument: jetrpc openrpc prints every method of
// jetrpc serve, their params and result types as a reader of
// handler/demo expects them (written by hand), with the corrections of
// demodoc.Options.
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
		`admin_stats() → {"$ref":"#/components/schemas/AdminStats"}`,
		`clock_subscribe(interval_ms {"type":"integer"}!) either → {"type":"string"}`,
		`clock_unsubscribe(id {"type":"string"}!) by-position → {"type":"boolean"}`,
		`countdown(from {"type":"integer"}!, interval_ms {"type":"integer"}!) either → {"type":"string"}`,
		`echo() either → true`,
		`fail() either → {"properties":{},"type":"object"}`,
		`get_data() → true`,
		`notify_hello() either → {"type":"null"}`,
		`notify_sum() either → {"type":"null"}`,
		`range(n {"type":"integer"}!) either → {"items":{"type":"integer"},"type":"array"}`,
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
	if err := json.Unmarshal(doc.Components.Schemas["AdminStats"], &stats); err != nil {
		t.Fatalf("AdminStats: %v", err)
	}
	if strings.Join(stats.Required, " ") != "connections goroutines uptime_seconds caller" ||
		string(stats.Properties["uptime_seconds"]) != `{"type":"number"}` || len(stats.Properties) != 4 {
		t.Errorf("AdminStats: %s", doc.Components.Schemas["AdminStats"])
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
	if err := registerServed(tab, func() int { return 3 }, topics.New(nil, nil), true, false); err != nil {
		t.Fatal(err)
	}
	reply := tab.Dispatch(context.Background(), nil, []byte(`{"jsonrpc":"2.0","method":"rpc.discover","id":1}`))
	want := `{"jsonrpc":"2.0","result":` + strings.TrimSuffix(out.String(), "\n") + `,"id":1}`
	if string(reply) != want {
		t.Fatalf("rpc.discover:\n%s\nwant\n%s", reply, want)
	}
	off := handler.NewTable()
	if err := registerServed(off, func() int { return 0 }, topics.New(nil, nil), false, false); err != nil {
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

// discoverListsAdmin posts rpc.discover to url with the headers and
// reports whether the document lists admin_stats, checking that it is a
// document of the other methods.
func discoverListsAdmin(t *testing.T, url string, header ...string) bool {
	t.Helper()
	st, body := postAs(t, url, `{"jsonrpc":"2.0","method":"rpc.discover","id":1}`, header...)
	var r struct {
		Result struct {
			Methods []struct {
				Name string `json:"name"`
			} `json:"methods"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &r); st != 200 || err != nil {
		t.Fatalf("rpc.discover %q: %d %q", header, st, body)
	}
	names := map[string]bool{}
	for _, m := range r.Result.Methods {
		names[m.Name] = true
	}
	if !names["add"] || !names["clock_subscribe"] {
		t.Fatalf("rpc.discover %q: methods %v", header, names)
	}
	return names["admin_stats"]
}

// TestServe_discoverByGrant: with --api-keys, rpc.discover tells a key
// without the admin grant nothing of admin_stats, and an admin key or a
// JWT (every grant) of it; --discover-by-grant=false lists it to every
// key; without authentication it is listed (no caller could be told
// apart). A key without admin used to see admin_stats.
func TestServe_discoverByGrant(t *testing.T) {
	const admin, user = "admin-key-0123456789abcdef", "user-key-0123456789abcdef"
	keys := writeFile(t, "keys", admin+" admin\n"+user+" read\n")
	jwtFile := writeFile(t, "jwt.hex", strings.Repeat("ab", 32)+"\n")
	key, err := auth.LoadJWTSecret(jwtFile)
	if err != nil {
		t.Fatal(err)
	}
	token, err := auth.NewJWTToken(key, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	byGrant := urlsIn(startServe(t, 1, "--listen", "127.0.0.1:0", "--api-keys", keys, "--jwt-secret", jwtFile)[0])["http"]
	for range 2 { // built, then kept
		if discoverListsAdmin(t, byGrant, "Authorization", "Bearer "+user) {
			t.Error("by grant: a key without admin is told of admin_stats")
		}
		if !discoverListsAdmin(t, byGrant, "Authorization", "Bearer "+admin) {
			t.Error("by grant: an admin key is not told of admin_stats")
		}
	}
	if !discoverListsAdmin(t, byGrant, "Authorization", "Bearer "+token) {
		t.Error("by grant: a JWT is not told of admin_stats")
	}
	all := urlsIn(startServe(t, 1, "--listen", "127.0.0.1:0", "--api-keys", keys, "--discover-by-grant=false")[0])["http"]
	if !discoverListsAdmin(t, all, "Authorization", "Bearer "+user) {
		t.Error("--discover-by-grant=false: a key without admin is not told of admin_stats")
	}
	open := urlsIn(startServe(t, 1, "--listen", "127.0.0.1:0")[0])["http"]
	if !discoverListsAdmin(t, open) {
		t.Error("without authentication: admin_stats not listed")
	}
}
