package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"time"

	"github.com/jetrpc/jetrpc/bench"
	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/demo"
)

const benchUsage = `usage: jetrpc bench [flags] [target]

target: http://host:port/path, ws://host:port/path, tcp://host:port or unix:///path. Without a
target, an in-process jetrpc server is started on loopback and measured.

flags:
`

// runBench is `jetrpc bench`.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, benchUsage); fs.PrintDefaults() }
	var cfg bench.Config
	fs.IntVar(&cfg.Conns, "c", bench.DefaultConns, "connections")
	fs.DurationVar(&cfg.Duration, "d", 0, "measured duration (default 10s; 5s against the in-process server)")
	fs.Int64Var(&cfg.Requests, "n", 0, "stop after this many requests instead of a duration")
	fs.DurationVar(&cfg.Warmup, "warmup", bench.DefaultWarmup, "unmeasured warm-up before measuring (0: none)")
	fs.Float64Var(&cfg.Rate, "rate", 0, "open loop: total requests/s, latency from intended send times (0: closed loop)")
	fs.IntVar(&cfg.Pipeline, "pipeline", 1, "requests in flight per connection")
	fs.IntVar(&cfg.Batch, "batch", 1, "calls per request (a batch when > 1)")
	fs.Float64Var(&cfg.Notify, "notify", 0, "share of calls sent as notifications, 0 to 1")
	fs.StringVar(&cfg.Method, "method", bench.DefaultMethod, "method to call")
	fs.StringVar(&cfg.Params, "params", bench.DefaultParams, "params, as JSON")
	bodies := fs.String("bodies", "", "`file` of request bodies, one JSON-RPC message per line, sent in turn")
	fs.BoolVar(&cfg.ExpectError, "expect-error", false, "the calls are expected to fail")
	fs.BoolVar(&cfg.NoCheck, "no-check", false, "frame replies without checking them (for fixed-reply ceiling servers)")
	fs.DurationVar(&cfg.Timeout, "timeout", bench.DefaultTimeout, "longest wait for a reply; also the most the run waits after the end for replies in flight")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	plot := fs.String("plot", "", "write the latency distribution chart to this SVG `file`")
	quiet := fs.Bool("q", false, "no progress line")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil // -h: the usage was printed
		}
		return err
	}
	if fs.NArg() > 1 {
		fs.Usage()
		return errors.New("one target at most")
	}
	if err := checkBenchFlags(fs, &cfg); err != nil {
		return err
	}
	if *bodies != "" {
		b, err := readBodies(*bodies)
		if err != nil {
			return err
		}
		cfg.Bodies = b
	}
	if !*quiet && !*asJSON {
		if f, ok := stderr.(*os.File); ok && bench.IsTerminal(f) {
			cfg.Progress = stderr
		}
	}
	if fs.NArg() == 1 {
		cfg.Target = fs.Arg(0)
	} else {
		stop, target, err := inProcessServer()
		if err != nil {
			return err
		}
		defer stop()
		cfg.Target = target
		if cfg.Duration == 0 {
			cfg.Duration = 5 * time.Second
		}
		if !*asJSON {
			fmt.Fprintf(stdout, "No target given: measuring an in-process jetrpc server at %s.\n"+
				"It shares the CPU with the load generator; for the fairer figure run the server in its own\n"+
				"process on its own core:  taskset -c 0 jetrpc serve --loops 1 &  taskset -c 1 jetrpc bench http://127.0.0.1:8080/\n\n", target)
		}
	}
	res, err := bench.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else {
		res.WriteTable(stdout)
	}
	if *plot != "" {
		f, err := os.Create(*plot)
		if err != nil {
			return err
		}
		if err := res.WritePlotSVG(f); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	if res.TotalErrors() > 0 {
		return fmt.Errorf("%d errors: the server did not answer right", res.TotalErrors())
	}
	return nil
}

// checkBenchFlags refuses flag values that bench.Config would take as
// "the default" (a zero count), and maps an explicit -warmup 0 to none.
func checkBenchFlags(fs *flag.FlagSet, cfg *bench.Config) error {
	switch {
	case cfg.Conns <= 0:
		return fmt.Errorf("-c %d: at least one connection", cfg.Conns)
	case cfg.Pipeline <= 0:
		return fmt.Errorf("-pipeline %d: at least one request in flight", cfg.Pipeline)
	case cfg.Batch < 0:
		return fmt.Errorf("-batch %d: a negative batch size", cfg.Batch)
	case !(cfg.Rate >= 0) || math.IsInf(cfg.Rate, 0):
		return fmt.Errorf("-rate %v: a finite number of requests/s, 0 or more", cfg.Rate)
	case !(cfg.Notify >= 0 && cfg.Notify <= 1):
		return fmt.Errorf("-notify %v: a share between 0 and 1", cfg.Notify)
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "warmup" && cfg.Warmup == 0 {
			cfg.Warmup = -1 // none, where bench.Config's zero means the default
		}
	})
	return nil
}

// readBodies reads one JSON-RPC message per non-empty line.
func readBodies(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
			out = append(out, append([]byte(nil), line...))
		}
	}
	return out, sc.Err()
}

// inProcessServer starts the bundled server's methods on a free port.
func inProcessServer() (stop func(), target string, err error) {
	quiet := slog.New(slog.DiscardHandler)
	tab := handler.NewTable(handler.WithLogger(quiet))
	demo.Register(tab)
	e := engine.New(tab, engine.WithAddrs("tcp://127.0.0.1:0"), engine.WithLogger(quiet))
	if err := e.Start(); err != nil {
		return nil, "", err
	}
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = e.Stop(ctx)
	}
	return stop, "http://" + e.Addrs()[0].String() + "/", nil
}
