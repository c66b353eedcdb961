package bench

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"
)

// NOTE: --from-discover asks the server for its OpenRPC document
// (rpc.discover) and makes a workload of it: one call of each method,
// weight 1, its params the first example's when the method has one, else
// made from the params' schemas (generators for numbers, a value of the
// right type otherwise). Subscriptions (methods with a notification, or
// named *_subscribe/*_unsubscribe) and rpc.* are left out: a load test
// of calls cannot follow them.

// Discover asks the server at url (http:// or https://) for its OpenRPC
// document with rpc.discover, sending header (nil for none) and using
// tlsConfig for https (nil: the system's roots).
func Discover(ctx context.Context, url string, header http.Header, tlsConfig *tls.Config) ([]byte, error) {
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		return nil, fmt.Errorf("discovery asks over HTTP: %q must be http:// or https://", url)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(`{"jsonrpc":"2.0","method":"rpc.discover","id":1}`))
	if err != nil {
		return nil, err
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig}}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("rpc.discover: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMessage))
	if err != nil {
		return nil, fmt.Errorf("rpc.discover: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("rpc.discover: HTTP %d", resp.StatusCode)
	}
	var reply struct {
		Result json.RawMessage
		Error  *struct {
			Code    int64
			Message string
		}
	}
	if err := json.Unmarshal(body, &reply); err != nil {
		return nil, fmt.Errorf("rpc.discover: the reply is not JSON-RPC: %w", err)
	}
	if reply.Error != nil {
		return nil, fmt.Errorf("rpc.discover: error %d: %s", reply.Error.Code, reply.Error.Message)
	}
	return reply.Result, nil
}

// openRPCDoc is the part of an OpenRPC document a workload needs.
type openRPCDoc struct {
	Methods []struct {
		Name   string
		Params []struct {
			Name     string
			Required bool
			Schema   json.RawMessage
		}
		ParamStructure string `json:"paramStructure"`
		Examples       []struct {
			Params []struct {
				Name  string
				Value json.RawMessage
			}
		}
		Notification json.RawMessage `json:"x-notification"`
	}
	Components struct {
		Schemas map[string]json.RawMessage
	}
}

// WorkloadFromOpenRPC makes a workload of an OpenRPC document: one call
// of each method but subscriptions and rpc.*, weight 1 (see the note).
func WorkloadFromOpenRPC(doc []byte) (*Workload, error) {
	var d openRPCDoc
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("the OpenRPC document: %w", err)
	}
	w := &Workload{}
	for _, m := range d.Methods {
		if m.Name == "" || strings.HasPrefix(m.Name, "rpc.") || m.Notification != nil ||
			strings.HasSuffix(m.Name, "_subscribe") || strings.HasSuffix(m.Name, "_unsubscribe") {
			continue
		}
		byName := m.ParamStructure == "by-name"
		values := map[string]any{}
		var order []string
		if len(m.Examples) > 0 {
			for _, p := range m.Examples[0].Params {
				var v any
				if err := json.Unmarshal(p.Value, &v); err != nil {
					return nil, fmt.Errorf("method %s: example param %s: %w", m.Name, p.Name, err)
				}
				values[p.Name] = v
				order = append(order, p.Name)
			}
		} else {
			for _, p := range m.Params {
				if !p.Required {
					break // by position, the rest is optional too
				}
				values[p.Name] = valueOf(p.Schema, d.Components.Schemas, 0)
				order = append(order, p.Name)
			}
		}
		var params any
		if byName {
			params = values
		} else {
			list := make([]any, len(order))
			for i, name := range order {
				list[i] = values[name]
			}
			params = list
		}
		b, err := json.Marshal(params)
		if err != nil {
			return nil, err
		}
		w.Calls = append(w.Calls, WorkloadCall{Method: m.Name, Params: b})
	}
	if len(w.Calls) == 0 {
		return nil, errors.New("the OpenRPC document has no method to call")
	}
	sort.Slice(w.Calls, func(i, j int) bool { return w.Calls[i].Method < w.Calls[j].Method })
	return w, nil
}

// valueOf makes a value for a JSON Schema: a generator for numbers, the
// first enum value or a value of its type otherwise.
func valueOf(schema json.RawMessage, defs map[string]json.RawMessage, depth int) any {
	var s struct {
		Ref        string `json:"$ref"`
		Type       any
		Enum       []any
		Minimum    *float64
		Maximum    *float64
		Items      json.RawMessage
		Properties map[string]json.RawMessage
		Required   []string
	}
	if json.Unmarshal(schema, &s) != nil || depth > 8 {
		return nil
	}
	if s.Ref != "" {
		name := s.Ref[strings.LastIndexByte(s.Ref, '/')+1:]
		return valueOf(defs[name], defs, depth+1)
	}
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	typ, _ := s.Type.(string)
	if list, ok := s.Type.([]any); ok && len(list) > 0 {
		typ, _ = list[0].(string)
	}
	lo, hi := 0.0, 100.0
	if s.Minimum != nil {
		lo = *s.Minimum
		hi = lo + 100
	}
	if s.Maximum != nil {
		hi = *s.Maximum
	}
	switch typ {
	case "integer":
		return map[string]any{"$int": []any{lo, hi}}
	case "number":
		return map[string]any{"$float": []any{lo, hi}}
	case "string":
		return "x"
	case "boolean":
		return true
	case "array":
		if len(s.Items) > 0 {
			return []any{valueOf(s.Items, defs, depth+1)}
		}
		return []any{}
	case "object":
		obj := map[string]any{}
		for _, name := range s.Required {
			obj[name] = valueOf(s.Properties[name], defs, depth+1)
		}
		return obj
	}
	return nil
}

// String writes the workload as its JSON file would read.
func (w *Workload) String() string {
	var b bytes.Buffer
	b.WriteString("{\"calls\": [\n")
	for i, c := range w.Calls {
		line, _ := json.Marshal(c)
		b.WriteString("  ")
		b.Write(line)
		if i < len(w.Calls)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]}\n")
	return b.String()
}
