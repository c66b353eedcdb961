package main

// NOTE: jetrpc bench fanout (--subscribe TOPIC without a subcommand),
// the fan-out of a topic: its flags, which bind bench.FanoutConfig's
// fields, its usage section, the checks that refuse the values
// FanoutConfig would take as its defaults, and the run (bench.RunFanout),
// over the ws:// URLs given or the bundled server in-process.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/jetrpc/jetrpc/bench"
)

// fanoutMode is jetrpc bench fanout.
var fanoutMode = &benchMode{
	name:      "fanout",
	title:     "a fan-out run",
	legacy:    "--subscribe",
	legacyArg: " TOPIC",
	usage:     &fanoutUsage,
	run:       runFanout,
}

var fanoutUsage = commandUsage{
	dash: "-",
	head: `usage: jetrpc bench fanout --subscribe TOPIC [flags] [ws://node/ ...]
       jetrpc bench --subscribe TOPIC [flags] [ws://node/ ...]

The fan-out of a topic: -subscribers WebSocket connections, spread
round-robin over the ws:// URLs given (the nodes of one service), each
subscribe to TOPIC with topic_subscribe; then one publisher sends
topic_publish at -publish-rate for -d (or -publishes times). It prints
the deliveries expected, made, lost, duplicated and out of order, and the
delivery latency percentiles, and exits with status 2 when more than
-max-lost deliveries were lost, a subscriber failed or dropped, or the
publisher got an error. With no URL it measures the bundled server
in-process.
`,
	groups: []flagGroup{
		{"fan-out (ws:// targets)", []string{"subscribe", "subscribers", "publish-rate", "publishes", "publish-url",
			"payload-size", "drain", "max-lost", "connect-concurrency"}},
		{"load", []string{"d"}},
		{"replies", []string{"timeout"}},
		{"authentication", []string{"header", "jwt-secret"}},
		{"compression", []string{"ws-compression"}},
		{"output", []string{"json", "q"}},
	},
	examples: `  jetrpc bench fanout --subscribe news -subscribers 10000 -publish-rate 100 -d 10s ws://127.0.0.1:8080/
  jetrpc bench fanout --subscribe news -json -max-lost 10 ws://10.0.0.1:8080/ ws://10.0.0.2:8080/  # two nodes
`,
}

// newFanoutFlags defines the flags of a fan-out run (--subscribe) on fs.
func newFanoutFlags(fs *flag.FlagSet, b *benchFlags) {
	f := &b.fan
	fs.StringVar(&b.topic, "subscribe", "", "measure the fan-out of `topic`: subscribers subscribe to it with topic_subscribe, "+
		"a publisher publishes on it with topic_publish, and every delivery is checked and timed")
	fs.IntVar(&f.Subscribers, "subscribers", bench.DefaultSubscribers, "subscribers, one WebSocket connection each, spread round-robin over the URLs")
	fs.Float64Var(&f.PublishRate, "publish-rate", bench.DefaultPublishRate, "publishes per second, an open loop: each payload carries its intended send time")
	fs.Int64Var(&f.Publishes, "publishes", 0, "stop after this many publishes instead of -d")
	fs.StringVar(&f.PublishURL, "publish-url", "", "the publisher's node, a ws:// `URL` (default the first URL)")
	fs.IntVar(&f.PayloadSize, "payload-size", 0, "pad each payload, {\"seq\":N,\"t\":T}, to at least this many `bytes`")
	fs.DurationVar(&f.Drain, "drain", bench.DefaultDrain, "after the last publish, the longest wait for the deliveries still due (the run goes on once all are in); 0 for none")
	fs.Int64Var(&f.MaxLost, "max-lost", 0, "lost deliveries tolerated before the exit status is 2; -1 for any")
	fs.IntVar(&f.ConnectConcurrency, "connect-concurrency", bench.DefaultConnectConcurrency, "connections dialed at once while connecting the subscribers")
}

// runFanout is `jetrpc bench fanout --subscribe TOPIC`: a fan-out run
// over the URLs given, or the bundled server in-process.
func runFanout(ctx context.Context, a *benchArgs, stdout, stderr io.Writer) error {
	fs, cfg, b := a.fs, &a.cfg, a.benchFlags
	if b.topic == "" {
		return a.usageError(stderr, errors.New("bench fanout measures a topic: it needs --subscribe TOPIC"))
	}
	fc := b.fan
	fc.Topic, fc.Targets = b.topic, fs.Args()
	fc.Duration, fc.Timeout, fc.Header, fc.JWTSecret = cfg.Duration, cfg.Timeout, cfg.Header, cfg.JWTSecret
	fc.WSCompression = cfg.WSCompression
	if err := checkFanoutFlags(&fc); err != nil {
		return a.usageError(stderr, err)
	}
	if err := checkAuthFlags(cfg, fs.Arg(0)); err != nil {
		return a.usageError(stderr, err)
	}
	if !b.quiet && !b.asJSON {
		if f, ok := stderr.(*os.File); ok && bench.IsTerminal(f) {
			fc.Progress = stderr
		}
	}
	if len(fc.Targets) == 0 {
		stop, target, err := inProcessTopicServer(fc.WSCompression)
		if err != nil {
			return err
		}
		defer stop()
		fc.Targets = []string{target}
		if fc.Duration == 0 && fc.Publishes == 0 {
			fc.Duration = 5 * time.Second
		}
		if !b.asJSON {
			fmt.Fprintf(stdout, "No target given: measuring the fan-out of an in-process jetrpc server at %s.\n"+
				"It shares the CPU with the load generator; for the fairer figure run jetrpc serve in its own process.\n\n", target)
		}
	}
	res, err := bench.RunFanout(ctx, fc)
	if err != nil {
		return err
	}
	if b.asJSON {
		if err := writeJSON(stdout, res); err != nil {
			return err
		}
	} else {
		res.WriteTable(stdout)
	}
	if !res.OK {
		return fmt.Errorf("fan-out failed: %s", strings.Join(res.Failures, "; "))
	}
	return nil
}

// checkFanoutFlags refuses values bench.FanoutConfig would take as "the
// default", and targets that are not ws:// URLs; an explicit -drain 0
// means none. (The flags of other modes are refused before, by
// benchArgs.refuse.)
func checkFanoutFlags(fc *bench.FanoutConfig) error {
	switch {
	case fc.Subscribers <= 0:
		return fmt.Errorf("-subscribers %d: at least one", fc.Subscribers)
	case !(fc.PublishRate > 0) || math.IsInf(fc.PublishRate, 0):
		return fmt.Errorf("-publish-rate %v: a finite number of publishes/s, more than 0", fc.PublishRate)
	case fc.Publishes < 0:
		return fmt.Errorf("-publishes %d: a negative count", fc.Publishes)
	case fc.PayloadSize < 0:
		return fmt.Errorf("-payload-size %d: a negative size", fc.PayloadSize)
	case fc.ConnectConcurrency <= 0:
		return fmt.Errorf("-connect-concurrency %d: at least one", fc.ConnectConcurrency)
	case fc.Drain < 0:
		return fmt.Errorf("-drain %v: a negative wait", fc.Drain)
	}
	for _, u := range append(slices.Clone(fc.Targets), fc.PublishURL) {
		if u != "" && !strings.HasPrefix(u, "ws://") {
			return fmt.Errorf("%q: a fan-out run subscribes over WebSocket: each node is a ws:// URL", u)
		}
	}
	if fc.PublishURL != "" && len(fc.Targets) == 0 {
		return errors.New("-publish-url without a target: the in-process server is the only node")
	}
	if fc.Drain == 0 {
		fc.Drain = -1 // none, where bench.FanoutConfig's zero means the default
	}
	return nil
}
