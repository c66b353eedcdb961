package main

// NOTE: the usage texts of jetrpc and its commands. Each command's text is
// a hand-written head (what it does, its defaults) and examples around its
// flags, which are printed from the command's FlagSet group by group, so
// that a flag's argument name, description and default stay those of its
// definition. Every flag must be in exactly one group (TestUsage_groups).

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
)

const usage = `usage: jetrpc <command> [flags]

commands:
  serve   run the bundled JSON-RPC 2.0 server (HTTP/1.1, WebSocket and JSON
          streams on one port; 127.0.0.1:8080 by default)
  bench   load-test a JSON-RPC server, or the bundled one in-process; with
          -header or -jwt-secret, one that wants authentication; with
          --subscribe TOPIC, the fan-out of a topic to many WebSocket
          subscribers, over one node or several; modes: jetrpc bench
          run|find-max|targets|fanout|compare (jetrpc bench help MODE)
  openrpc print the bundled server's OpenRPC document (what rpc.discover answers)
  help    print this text, or a command's: jetrpc help serve

Run jetrpc <command> -h for a command's flags and examples.
`

// flagGroup is a titled part of a command's flags in its usage text. An
// entry of names is one flag, or several separated by commas that are
// printed as one (aliases): the first one's description is printed.
type flagGroup struct {
	title string
	names []string
}

// commandUsage is a command's usage text.
type commandUsage struct {
	dash     string      // how a long flag is written: "--" or "-" (the flag package takes either)
	head     string      // what the command does and its defaults
	groups   []flagGroup // its flags, in order
	examples string      // after the flags
}

// write prints the usage of the command whose flags are fs.
func (u *commandUsage) write(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, u.head)
	for _, g := range u.groups {
		fmt.Fprintf(w, "\n%s:\n", g.title)
		for _, entry := range g.names {
			u.writeFlag(w, fs, strings.Split(entry, ","))
		}
	}
	if u.examples != "" {
		fmt.Fprintf(w, "\nexamples:\n%s", u.examples)
	}
}

// writeFlag prints the flags names (aliases of the first) of fs, as
//
//	--name ARG, --alias ARG
//	      description with its `arg` in upper case (default V)
//
// It panics on a name fs does not define: a usage text out of step with
// its flags is a bug that the tests catch.
func (u *commandUsage) writeFlag(w io.Writer, fs *flag.FlagSet, names []string) {
	var heads []string
	var desc string
	for i, name := range names {
		f := fs.Lookup(name)
		if f == nil {
			panic("jetrpc: usage names an undefined flag " + name)
		}
		arg, _ := flag.UnquoteUsage(f)
		heads = append(heads, strings.TrimSpace(u.dashes(name)+" "+argName(arg)))
		if i == 0 {
			desc = strings.Replace(f.Usage, "`"+arg+"`", argName(arg), 1)
			if def := defaultText(f, arg); def != "" {
				desc += " (default " + def + ")"
			}
		}
	}
	fmt.Fprintf(w, "  %s\n", strings.Join(heads, ", "))
	for _, line := range wrap(desc, 70) {
		fmt.Fprintf(w, "        %s\n", line)
	}
}

// dashes writes a flag as it is documented: -c for a one-letter name,
// u.dash and the name for the others.
func (u *commandUsage) dashes(name string) string {
	if len(name) == 1 || u.dash == "" {
		return "-" + name
	}
	return u.dash + name
}

// argName is the upper-case argument name of a flag: its back-quoted
// word, or a name for its type; none for a boolean.
func argName(arg string) string {
	switch arg {
	case "":
		return ""
	case "int", "uint", "int64", "uint64", "float":
		return "N"
	case "duration":
		return "DURATION"
	case "string", "value":
		return "VALUE"
	}
	return strings.ToUpper(arg)
}

// defaultText is a flag's default as the usage shows it, or "" when the
// default is zero, empty or explained by the description. A byte count
// also gets its size in KiB or MiB.
func defaultText(f *flag.Flag, arg string) string {
	switch f.DefValue {
	case "", "0", "0s", "false", "[]":
		return ""
	}
	if g, ok := f.Value.(flag.Getter); ok {
		if _, isString := g.Get().(string); isString {
			return strconv.Quote(f.DefValue)
		}
	}
	if strings.EqualFold(arg, "bytes") {
		if n, err := strconv.Atoi(f.DefValue); err == nil {
			switch {
			case n >= 1<<20 && n%(1<<20) == 0:
				return fmt.Sprintf("%d = %d MiB", n, n>>20)
			case n >= 1<<10 && n%(1<<10) == 0:
				return fmt.Sprintf("%d = %d KiB", n, n>>10)
			}
		}
	}
	return f.DefValue
}

// wrap splits s into lines of at most width bytes, at spaces (a longer
// word gets a line of its own).
func wrap(s string, width int) []string {
	var lines []string
	var line strings.Builder
	for _, word := range strings.FieldsFunc(s, unicode.IsSpace) {
		if line.Len() > 0 && line.Len()+1+len(word) > width {
			lines = append(lines, line.String())
			line.Reset()
		}
		if line.Len() > 0 {
			line.WriteByte(' ')
		}
		line.WriteString(word)
	}
	if line.Len() > 0 {
		lines = append(lines, line.String())
	}
	return lines
}

// errUsage marks an error that has been printed with the command's usage
// text; main does not print it again.
type errUsage struct{ err error }

func (e errUsage) Error() string { return e.err.Error() }
func (e errUsage) Unwrap() error { return e.err }

// parseFlags parses a command's arguments. For -h, -help or --help it
// prints the usage to stdout and returns help true; on a flag error it
// prints "jetrpc <command>: error", then the usage, to stderr and returns
// the error as an errUsage.
func parseFlags(fs *flag.FlagSet, u *commandUsage, args []string, stdout, stderr io.Writer) (help bool, err error) {
	fs.SetOutput(io.Discard) // the flag package's own messages: printed here instead
	fs.Usage = func() {}
	err = fs.Parse(args)
	switch {
	case err == nil:
		return false, nil
	case errors.Is(err, flag.ErrHelp):
		u.write(stdout, fs)
		return true, nil
	}
	return false, usageError(fs, u, stderr, err)
}

// usageError prints err and the usage of the command to stderr, and
// returns err marked as printed.
func usageError(fs *flag.FlagSet, u *commandUsage, stderr io.Writer, err error) error {
	fmt.Fprintf(stderr, "jetrpc %s: %v\n\n", fs.Name(), err)
	u.write(stderr, fs)
	return errUsage{err}
}
