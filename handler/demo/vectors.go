package demo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// Vector is one request and the reply it must get, from the files in the
// repository's testdata directory.
type Vector struct {
	// File is the file the vector came from.
	File string
	// Name names the vector within its file.
	Name string
	// Request is the message sent, as bytes.
	Request []byte
	// Response is the reply expected; nil means no reply at all.
	Response []byte
	// Note says which rule the vector checks.
	Note string
}

// LoadVectors reads spec-examples.json and edge-cases.json in dir.
func LoadVectors(dir string) ([]Vector, error) {
	var out []Vector
	for _, name := range []string{"spec-examples.json", "edge-cases.json"} {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		var doc struct {
			Examples []vectorJSON `json:"examples"`
			Cases    []vectorJSON `json:"cases"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for _, v := range append(doc.Examples, doc.Cases...) {
			vec := Vector{File: name, Name: v.Name, Note: v.Note + v.Title, Request: []byte(v.Request)}
			if v.Response != nil {
				vec.Response = []byte(*v.Response)
			}
			if v.Bytes == "latin1" {
				vec.Request = latin1(v.Request)
				if v.Response != nil {
					vec.Response = latin1(*v.Response)
				}
			}
			out = append(out, vec)
		}
	}
	return out, nil
}

type vectorJSON struct {
	Name     string
	Title    string
	Note     string
	Request  string
	Response *string
	Bytes    string
}

// latin1 maps each character (all below U+0100) to one byte.
func latin1(s string) []byte {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		b = append(b, byte(r))
	}
	return b
}

// SameReply reports how got differs from the expected reply want, or nil
// when they match: both are compared as JSON values, error messages are
// free, and the replies of a batch may come in any order. want == nil
// means no reply, so got must be empty.
func SameReply(got, want []byte) error {
	got = bytes.TrimSpace(got)
	if want == nil {
		if len(got) != 0 {
			return fmt.Errorf("want no reply, got %s", got)
		}
		return nil
	}
	if len(got) == 0 {
		return errors.New("want a reply, got none")
	}
	g, err := canonical(got)
	if err != nil {
		return fmt.Errorf("reply %s is not JSON: %w", got, err)
	}
	w, err := canonical(want)
	if err != nil {
		return fmt.Errorf("expected reply %s is not JSON: %w", want, err)
	}
	if g != w {
		return fmt.Errorf("reply differs\n got %s\nwant %s", got, want)
	}
	return nil
}

// canonical renders a reply with error messages blanked and batch replies
// sorted, so that equal replies render equal.
func canonical(b []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	if dec.More() {
		return "", errors.New("trailing data")
	}
	if arr, ok := v.([]any); ok {
		parts := make([]string, len(arr))
		for i, e := range arr {
			parts[i] = one(e)
		}
		sort.Strings(parts)
		return fmt.Sprintf("%q", parts), nil
	}
	return one(v), nil
}

func one(v any) string {
	if m, ok := v.(map[string]any); ok {
		if e, ok := m["error"].(map[string]any); ok {
			if _, has := e["message"].(string); has {
				e["message"] = "" // the message is free
			}
		}
	}
	out, _ := json.Marshal(v)
	return string(out)
}
