package main

// NOTE: what the request modes of jetrpc bench (run, find-max, targets)
// share before they send anything: the checks of the shared flags
// (checkBenchFlags, checkAuthFlags, tlsConfig), the calls to send
// (prepareRequests: --from-discover, -workload, -bodies), and the one
// target of run and find-max (singleTarget: the argument, the
// --from-discover URL, or the bundled server in-process).

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/jetrpc/jetrpc/bench"
)

// prepareRequests checks the shared flags of a request mode and fills
// a.cfg with what they say: TLS, the workload (from --from-discover or
// -workload), the bodies, and the progress line on a terminal.
func prepareRequests(ctx context.Context, a *benchArgs, stderr io.Writer) error {
	fs, b, cfg := a.fs, a.benchFlags, &a.cfg
	if err := checkBenchFlags(fs, cfg); err != nil {
		return err
	}
	if err := checkAuthFlags(cfg, fs.Arg(0)); err != nil {
		return a.usageError(stderr, err)
	}
	if b.insecure || b.ca != "" {
		tc, err := tlsConfig(b.insecure, b.ca)
		if err != nil {
			return a.usageError(stderr, err)
		}
		cfg.TLS = tc
	}
	if b.workload != "" {
		if b.discover != "" {
			return a.usageError(stderr, errors.New("--from-discover builds the workload: no -workload with it"))
		}
		if b.bodies != "" || setFlag(fs, []string{"method", "params", "notify", "expect-error"}) != "" {
			return a.usageError(stderr, errors.New("-workload holds the calls: no -method, -params, -notify, -expect-error or -bodies with it"))
		}
	}
	if b.discover != "" {
		doc, err := bench.Discover(ctx, b.discover, cfg.Header, cfg.TLS)
		if err != nil {
			return err
		}
		if cfg.Workload, err = bench.WorkloadFromOpenRPC(doc); err != nil {
			return err
		}
	}
	if b.workload != "" {
		wl, err := bench.LoadWorkload(b.workload)
		if err != nil {
			return err
		}
		cfg.Workload = wl
	}
	if b.bodies != "" {
		bodies, err := readBodies(b.bodies)
		if err != nil {
			return err
		}
		cfg.Bodies = bodies
	}
	if !b.quiet && !b.asJSON {
		if f, ok := stderr.(*os.File); ok && bench.IsTerminal(f) {
			cfg.Progress = stderr
		}
	}
	return nil
}

// singleTarget sets the one target of a run or a capacity search: the
// argument, else the --from-discover URL, else the bundled server,
// started in-process (stop stops it; nil when there is none to stop) and
// measured for 5s unless told otherwise.
func singleTarget(a *benchArgs, stdout io.Writer) (stop func(), err error) {
	cfg := &a.cfg
	switch {
	case a.fs.NArg() == 1:
		cfg.Target = a.fs.Arg(0)
		return nil, nil
	case a.discover != "":
		cfg.Target = a.discover
		return nil, nil
	}
	stop, target, err := inProcessServer(cfg)
	if err != nil {
		return nil, err
	}
	cfg.Target = target
	if cfg.Duration == 0 && cfg.Requests == 0 && len(cfg.Schedule) == 0 {
		cfg.Duration = 5 * time.Second
	}
	if !a.asJSON {
		fmt.Fprintf(stdout, "No target given: measuring an in-process jetrpc server at %s.\n"+
			"It shares the CPU with the load generator; for the fairer figure run the server in its own\n"+
			"process on its own core:  taskset -c 0 jetrpc serve --loops 1 &  taskset -c 1 jetrpc bench http://127.0.0.1:8080/\n\n", target)
	}
	return stop, nil
}

// tlsConfig is the TLS client config of -insecure and -ca.
func tlsConfig(insecure bool, ca string) (*tls.Config, error) {
	if insecure && ca != "" {
		return nil, errors.New("-insecure and -ca: -insecure verifies nothing, -ca verifies against the file")
	}
	tc := &tls.Config{InsecureSkipVerify: insecure} // #nosec G402 -- what -insecure asks for
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("-ca: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("-ca %s: no PEM certificate in the file", ca)
		}
	}
	return tc, nil
}

// checkAuthFlags refuses -header, -jwt-secret and -trace-sample where
// they cannot be sent: over a raw stream target, an Authorization header
// next to the JWT that would replace it, and a traceparent header next
// to -trace-sample, which writes its own.
func checkAuthFlags(cfg *bench.Config, target string) error {
	stream := strings.HasPrefix(target, "tcp://") || strings.HasPrefix(target, "unix://")
	if cfg.TraceSample > 0 {
		if stream {
			return fmt.Errorf("-trace-sample needs an http:// or ws:// target; %s is a raw stream, which has no headers", target)
		}
		if len(cfg.Header.Values("Traceparent")) > 0 {
			return errors.New("-header traceparent and -trace-sample: -trace-sample writes the traceparent")
		}
	}
	if len(cfg.Header) == 0 && len(cfg.JWTSecret) == 0 {
		return nil
	}
	if stream {
		return fmt.Errorf("-header and -jwt-secret need an http:// or ws:// target; %s is a raw stream, which has no headers", target)
	}
	if len(cfg.JWTSecret) > 0 && len(cfg.Header.Values("Authorization")) > 0 {
		return errors.New("-header Authorization and -jwt-secret: the JWT is sent as the Authorization header")
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
	case !(cfg.TraceSample >= 0 && cfg.TraceSample <= 1):
		return fmt.Errorf("-trace-sample %v: a share between 0 and 1", cfg.TraceSample)
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
