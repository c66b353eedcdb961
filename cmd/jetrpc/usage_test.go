package main

import (
	"flag"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/bench"
)

// TestUsage_groups: each command's usage lists every one of its flags
// once, so that a new flag cannot be left out of -h.
func TestUsage_groups(t *testing.T) {
	serveFS, _ := newServeFlags()
	benchFS, _ := newBenchFlags(new(bench.Config))
	for _, c := range []struct {
		fs *flag.FlagSet
		u  *commandUsage
	}{{serveFS, &serveUsage}, {benchFS, &benchUsage}} {
		seen := map[string]int{}
		for _, g := range c.u.groups {
			for _, entry := range g.names {
				for _, name := range strings.Split(entry, ",") {
					if c.fs.Lookup(name) == nil {
						t.Errorf("%s: the usage lists %q, which is not a flag", c.fs.Name(), name)
					}
					seen[name]++
				}
			}
		}
		c.fs.VisitAll(func(f *flag.Flag) {
			if seen[f.Name] != 1 {
				t.Errorf("%s: flag %q is listed %d times in the usage, want 1", c.fs.Name(), f.Name, seen[f.Name])
			}
		})
	}
}

// TestUsage_benchAuth: bench -h shows -header and -jwt-secret in their
// group, with their argument names, and jetrpc's own usage mentions them.
func TestUsage_benchAuth(t *testing.T) {
	fs, _ := newBenchFlags(new(bench.Config))
	var b strings.Builder
	benchUsage.write(&b, fs)
	for _, want := range []string{
		"\nauthentication (http:// and ws:// targets):\n  -header HEADER\n        send HEADER, written 'Name: Value',",
		"\n  -jwt-secret FILE\n        send Authorization: Bearer with an HS256 JWT",
		"renewed every 30s",
		"Sec-WebSocket-*",
		"  jetrpc bench -jwt-secret jwt.hex ",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("bench usage lacks %q:\n%s", want, b.String())
		}
	}
	if !strings.Contains(usage, "-header or -jwt-secret") {
		t.Errorf("jetrpc usage does not mention -header and -jwt-secret:\n%s", usage)
	}
}

// TestUsage_benchModes: each mode's usage lists flags of bench, each once;
// every flag is taken by some mode (the legacy form reaches each flag).
func TestUsage_benchModes(t *testing.T) {
	fs, _ := newBenchFlags(new(bench.Config))
	taken := map[string]bool{}
	for _, m := range benchModes {
		seen := map[string]int{}
		for _, g := range m.usage.groups {
			for _, name := range g.names {
				if fs.Lookup(name) == nil {
					t.Errorf("bench %s: the usage lists %q, which is not a flag", m.name, name)
				}
				seen[name]++
				taken[name] = true
			}
		}
		for name, n := range seen {
			if n != 1 {
				t.Errorf("bench %s: %q listed %d times", m.name, name, n)
			}
		}
	}
	fs.VisitAll(func(f *flag.Flag) {
		if !taken[f.Name] {
			t.Errorf("flag %q is taken by no mode", f.Name)
		}
	})
}
