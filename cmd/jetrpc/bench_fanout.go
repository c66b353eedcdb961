package main

// NOTE: the fan-out mode of jetrpc bench (--subscribe TOPIC): its flags,
// which bind bench.FanoutConfig's fields, the checks that refuse the
// request-mode flags and the values FanoutConfig would take as its
// defaults, and the run (bench.RunFanout), over the ws:// URLs given or
// the bundled server in-process.

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

// runFanout is `jetrpc bench --subscribe TOPIC`: a fan-out run over the
// URLs given, or the bundled server in-process.
func runFanout(ctx context.Context, fs *flag.FlagSet, cfg *bench.Config, b *benchFlags, stdout, stderr io.Writer) error {
	fc := b.fan
	fc.Topic, fc.Targets = b.topic, fs.Args()
	fc.Duration, fc.Timeout, fc.Header, fc.JWTSecret = cfg.Duration, cfg.Timeout, cfg.Header, cfg.JWTSecret
	if err := checkFanoutFlags(fs, &fc); err != nil {
		return usageError(fs, &benchUsage, stderr, err)
	}
	if err := checkAuthFlags(cfg, fs.Arg(0)); err != nil {
		return usageError(fs, &benchUsage, stderr, err)
	}
	if !b.quiet && !b.asJSON {
		if f, ok := stderr.(*os.File); ok && bench.IsTerminal(f) {
			fc.Progress = stderr
		}
	}
	if len(fc.Targets) == 0 {
		stop, target, err := inProcessTopicServer()
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

// checkFanoutFlags refuses the flags that do not apply to a fan-out run,
// values bench.FanoutConfig would take as "the default", and targets that
// are not ws:// URLs; an explicit -drain 0 means none.
func checkFanoutFlags(fs *flag.FlagSet, fc *bench.FanoutConfig) error {
	if name := setFlag(fs, requestOnlyFlags); name != "" {
		return fmt.Errorf("-%s does not apply to a fan-out run (--subscribe)", name)
	}
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
