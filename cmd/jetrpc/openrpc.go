package main

// NOTE: the OpenRPC document of the bundled server: jetrpc serve answers
// it as rpc.discover and jetrpc openrpc prints it. Both register the
// methods with registerServed and build the document with demodoc.Options,
// so that the printed document is the one the server answers.

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
	"github.com/jetrpc/jetrpc/handler/demo/demodoc"
	"github.com/jetrpc/jetrpc/handler/openrpc"
	"github.com/jetrpc/jetrpc/handler/topics"
)

// moduleVersion is jetrpc's version as the build recorded it, "devel"
// for a build from a work tree.
func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// registerServed registers the methods of jetrpc serve on tab (the
// bundled server: demo.RegisterServer) and, with discover, rpc.discover
// answering its document (demodoc.Options), by the caller's grants with
// byGrant.
func registerServed(tab *handler.Table, conns func() int, node *topics.Topics, discover, byGrant bool) error {
	demo.RegisterServer(tab, node, conns)
	if !discover {
		return nil
	}
	return openrpc.Register(tab, append(demodoc.Options(moduleVersion()), openrpc.FilterByGrants(byGrant))...)
}

// newOpenRPCFlags returns the flags of jetrpc openrpc.
func newOpenRPCFlags() (fs *flag.FlagSet, compact *bool) {
	fs = flag.NewFlagSet("openrpc", flag.ContinueOnError)
	compact = fs.Bool("compact", false, "print the document as rpc.discover answers it, on one line, instead of indented")
	return fs, compact
}

var openrpcUsage = commandUsage{
	dash: "--",
	head: `usage: jetrpc openrpc [--compact]

jetrpc openrpc prints the OpenRPC 1.3 document (https://spec.open-rpc.org/)
of the bundled server to stdout: the document that jetrpc serve answers to
rpc.discover, generated from the Go types of its methods (package
handler/openrpc).
`,
	groups: []flagGroup{
		{"output", []string{"compact"}},
	},
	examples: `  jetrpc openrpc > openrpc.json
  curl -s localhost:8080 -H 'Content-Type: application/json' \
    -d '{"jsonrpc":"2.0","method":"rpc.discover","id":1}'   # the same, from a running jetrpc serve
`,
}

// runOpenRPC is jetrpc openrpc: it prints the bundled server's OpenRPC
// document, indented (or compact with --compact), followed by a newline.
func runOpenRPC(args []string, stdout, stderr io.Writer) error {
	fs, compact := newOpenRPCFlags()
	help, err := parseFlags(fs, &openrpcUsage, args, stdout, stderr)
	if help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError(fs, &openrpcUsage, stderr, fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	tab := handler.NewTable()
	if err := registerServed(tab, func() int { return 0 }, topics.New(nil, nil), true, false); err != nil {
		return err
	}
	doc, err := openrpc.Document(tab, demodoc.Options(moduleVersion())...)
	if err != nil {
		return err
	}
	if !*compact {
		var b bytes.Buffer
		if err := json.Indent(&b, doc, "", "  "); err != nil {
			return err
		}
		doc = b.Bytes()
	}
	_, err = fmt.Fprintf(stdout, "%s\n", doc)
	return err
}
