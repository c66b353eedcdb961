package bench

import (
	"fmt"
	"io"
	"maps"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// FanoutResult is what a fan-out test measured. Deliveries count
// (subscriber, message) pairs: one publish delivered to 10,000
// subscribers is 10,000 deliveries.
type FanoutResult struct {
	Topic      string       `json:"topic"`
	Nodes      []FanoutNode `json:"nodes"` // one per target, in order
	PublishURL string       `json:"publish_url"`
	// Subscribers is the number asked for; Subscribed those that got a
	// subscription id before publishing began (the dropped included).
	Subscribers int `json:"subscribers"`
	Subscribed  int `json:"subscribed"`
	// SubscribeFailed counts the subscribers that never subscribed, by
	// reason (the Sub* constants), and SubscribeError gives the first
	// reason's text, such as the server's refusal.
	SubscribeFailed map[string]int `json:"subscribe_failed"`
	SubscribeError  string         `json:"subscribe_error,omitempty"`
	// ConnectTime is how long connecting and subscribing took, until the
	// last reply (or Timeout).
	ConnectTime time.Duration `json:"connect_ns"`
	// Dropped is the subscribers whose connection closed during the run:
	// the messages they missed count as lost.
	Dropped int `json:"dropped"`

	Rate    float64 `json:"publish_rate"`      // publishes/s asked for
	Planned int64   `json:"publishes_planned"` // publishes the run was to send
	// Published is the publishes written; Acked those the server
	// answered (a result or an error); LocalDeliveries sums the results:
	// the subscribers of the publisher's node each publish was sent to,
	// as the server counts them (jetrpc serve's topic_publish answers
	// that count).
	Published       int64 `json:"publishes_sent"`
	Acked           int64 `json:"publishes_acked"`
	LocalDeliveries int64 `json:"local_deliveries"`
	// PublishErrors counts the publisher's errors by kind (the Pub*
	// constants); PublishError gives the first one's text.
	PublishErrors map[string]int64 `json:"publish_errors"`
	PublishError  string           `json:"publish_error,omitempty"`
	PayloadBytes  int              `json:"payload_bytes"` // the first publish's payload
	// PublishTime is from the first publish's intended time to the last
	// one's write; Drain is the wait after it.
	PublishTime time.Duration `json:"publish_ns"`
	Drain       time.Duration `json:"drain_ns"`
	// DrainComplete says every expected delivery and every publish reply
	// came in before the end of the drain. StillArriving counts, when it
	// did not, the deliveries made in the last half second of the drain
	// (its second half, for a drain under a second): a server still
	// delivering then is behind, and some of what is counted lost may
	// only be late (a longer Drain tells them apart).
	DrainComplete bool          `json:"drain_complete"`
	StillArriving int64         `json:"still_arriving"`
	window        time.Duration // the end of the drain StillArriving counts

	// Expected is Published × Subscribed; Delivered the deliveries of a
	// message published (each once: Duplicated counts the others); Lost
	// is Expected - Delivered. OutOfOrder counts deliveries that came
	// after one of a later message to the same subscriber; Invalid the
	// notifications that were not one of this run's messages in the
	// form expected (another method, another subscription, no "seq" or
	// "t", a sequence number never published).
	Expected   int64 `json:"expected"`
	Delivered  int64 `json:"delivered"`
	Lost       int64 `json:"lost"`
	Duplicated int64 `json:"duplicated"`
	OutOfOrder int64 `json:"out_of_order"`
	Invalid    int64 `json:"invalid"`
	// FullDecodes counts the notifications not in the exact form of a
	// jetrpc server and the publisher, which the tool decoded in full
	// (slower, and allocating) instead of scanning them in place.
	FullDecodes int64 `json:"full_decodes"`
	// WireInPerMessage is the bytes the subscribers read after they
	// subscribed (WebSocket frames as they are on the wire, compressed
	// ones compressed; pings too) per message they read (deliveries,
	// duplicates and invalid ones); 0 when none was. CompressedMessages
	// counts those messages that came compressed (RSV1, with
	// FanoutConfig.WSCompression) and were inflated.
	WireInPerMessage   float64 `json:"wire_in_bytes_per_message"`
	CompressedMessages int64   `json:"compressed_messages,omitempty"`
	// WSCompression is FanoutConfig.WSCompression: the subscribers
	// offered permessage-deflate.
	WSCompression bool `json:"ws_compression,omitempty"`
	// DeliveriesPerSec is Delivered over the time from the first
	// intended publish to the last delivery.
	DeliveriesPerSec float64 `json:"deliveries_per_sec"`
	// Latency is the delivery latency in microseconds: the time a
	// subscriber read a message minus the intended send time in its
	// payload (one clock on one machine; across machines, their clocks'
	// offset is in it). PublishLag is the publisher's own lateness: a
	// write minus its intended time, in it too. PublishAck is a reply to
	// topic_publish minus its intended time.
	Latency    Latency `json:"latency_us"`
	PublishLag Latency `json:"publish_lag_us"`
	PublishAck Latency `json:"publish_ack_us"`
	// Interrupted says the run was stopped before its end.
	Interrupted bool `json:"interrupted,omitempty"`
	// MaxLost is FanoutConfig.MaxLost; OK is false when Failures is not
	// empty: what a CI gate checks.
	MaxLost  int64    `json:"max_lost"`
	OK       bool     `json:"ok"`
	Failures []string `json:"failures,omitempty"`
	// Hist is the delivery latency histogram (microseconds).
	Hist *hdrhistogram.Histogram `json:"-"`
}

// FanoutNode is what the subscribers of one target measured.
type FanoutNode struct {
	URL         string  `json:"url"`
	Subscribers int     `json:"subscribers"`
	Subscribed  int     `json:"subscribed"`
	Failed      int     `json:"failed"`
	Dropped     int     `json:"dropped"`
	Expected    int64   `json:"expected"`
	Delivered   int64   `json:"delivered"`
	Lost        int64   `json:"lost"`
	Latency     Latency `json:"latency_us"`
}

// result fills res from the subscribers and the publisher (nil when
// nothing was published). The event loops and the publisher have ended.
func (f *fanout) result(res *FanoutResult, p *publisher) {
	res.Hist = hdrhistogram.New(histMin, histMax, histDigits)
	res.SubscribeFailed = map[string]int{}
	res.PublishErrors = map[string]int64{}
	if p != nil {
		res.Published, res.Acked = p.sent.Load(), p.acked.Load()
		res.LocalDeliveries, res.PayloadBytes = p.results, p.payload
		for k, v := range p.errs {
			res.PublishErrors[k] = v
		}
		res.PublishError = p.errText
		res.PublishTime = p.end.Sub(p.t0)
		res.PublishLag = latencyOf(p.lag)
		res.PublishAck = latencyOf(p.ack)
	}
	nodeHists := make([]*hdrhistogram.Histogram, len(f.nodes))
	res.Nodes = make([]FanoutNode, len(f.nodes))
	for i := range res.Nodes {
		res.Nodes[i].URL = f.cfg.Targets[i]
		nodeHists[i] = hdrhistogram.New(histMin, histMax, histDigits)
	}
	var last, wireIn, messages int64
	for _, st := range f.stats {
		nodeHists[st.node].Merge(st.hist)
		res.Hist.Merge(st.hist)
		last = max(last, st.last)
		wireIn, messages = wireIn+st.wireIn, messages+st.messages
		res.CompressedMessages += st.deflated
	}
	if messages > 0 {
		res.WireInPerMessage = float64(wireIn) / float64(messages)
	}
	res.WSCompression = f.cfg.WSCompression
	sent := res.Published
	fullWords, tail := int(sent/64), uint(sent%64)
	for _, s := range f.subs {
		n := &res.Nodes[s.node]
		n.Subscribers++
		switch s.state.Load() {
		case subDialing, subSubscribing, subFailed:
			n.Failed++
			kind := s.fail
			if kind == "" {
				kind = SubConnect // stopped before its dial
			}
			res.SubscribeFailed[kind]++
			if res.SubscribeError == "" && s.errText != "" {
				res.SubscribeError = kind + ": " + s.errText
			}
			continue
		case subDropped:
			n.Dropped++
			res.Dropped++
		}
		n.Subscribed++
		res.Subscribed++
		got, all := int64(0), int64(0)
		for i, w := range s.seen {
			c := int64(bits.OnesCount64(w))
			all += c
			switch {
			case i < fullWords:
				got += c
			case i == fullWords && tail > 0:
				got += int64(bits.OnesCount64(w & (1<<tail - 1)))
			}
		}
		n.Expected += sent
		n.Delivered += got
		res.Duplicated += s.dups
		res.OutOfOrder += s.ooo
		res.FullDecodes += s.slow
		// A delivery of a message never sent is one the server made up.
		res.Invalid += s.invalid + all - got
	}
	for i := range res.Nodes {
		n := &res.Nodes[i]
		n.Lost = n.Expected - n.Delivered
		n.Latency = latencyOf(nodeHists[i])
		res.Expected += n.Expected
		res.Delivered += n.Delivered
	}
	res.Lost = res.Expected - res.Delivered
	res.Latency = latencyOf(res.Hist)
	if p != nil && last > 0 {
		if d := time.Duration(last - p.t0.UnixNano()); d > 0 {
			res.DeliveriesPerSec = float64(res.Delivered) / d.Seconds()
		}
	}
	res.Failures = res.failures()
	res.OK = len(res.Failures) == 0
}

func latencyOf(h *hdrhistogram.Histogram) Latency {
	return Latency{
		P50: h.ValueAtQuantile(50), P90: h.ValueAtQuantile(90), P99: h.ValueAtQuantile(99),
		P999: h.ValueAtQuantile(99.9), Max: h.Max(), Mean: h.Mean(),
	}
}

// failures lists what makes the run fail: messages lost (beyond
// MaxLost), subscribers failed or dropped, publisher errors, duplicates,
// reordering and notifications not understood.
func (r *FanoutResult) failures() []string {
	var out []string
	failed := 0
	for _, v := range r.SubscribeFailed {
		failed += v
	}
	if failed > 0 {
		out = append(out, fmt.Sprintf("%d of %d subscribers failed to subscribe (%s)", failed, r.Subscribers, joinCounts(r.SubscribeFailed)))
	}
	if r.Dropped > 0 {
		out = append(out, fmt.Sprintf("%d subscribers dropped during the run", r.Dropped))
	}
	if len(r.PublishErrors) > 0 {
		out = append(out, fmt.Sprintf("publisher errors (%s)", joinCounts(r.PublishErrors)))
	}
	if r.Lost > 0 && (r.MaxLost >= 0 && r.Lost > r.MaxLost) {
		out = append(out, fmt.Sprintf("%d of %d deliveries lost (at most %d allowed)", r.Lost, r.Expected, r.MaxLost))
	}
	if r.Duplicated > 0 {
		out = append(out, fmt.Sprintf("%d deliveries duplicated", r.Duplicated))
	}
	if r.OutOfOrder > 0 {
		out = append(out, fmt.Sprintf("%d deliveries out of order", r.OutOfOrder))
	}
	if r.Invalid > 0 {
		out = append(out, fmt.Sprintf("%d notifications not understood", r.Invalid))
	}
	if r.Interrupted {
		out = append(out, "interrupted before the end")
	}
	return out
}

// joinCounts writes counts by kind as "kind n, kind n", sorted by kind.
func joinCounts[V int | int64](m map[string]V) string {
	kinds := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// WriteTable writes a human-readable summary.
func (r *FanoutResult) WriteTable(w io.Writer) {
	nodes := make([]string, len(r.Nodes))
	for i, n := range r.Nodes {
		nodes[i] = n.URL
	}
	fmt.Fprintf(w, "topic        %s on %d node(s): %s; publisher on %s\n", r.Topic, len(r.Nodes), strings.Join(nodes, " "), r.PublishURL)
	fmt.Fprintf(w, "subscribers  %d asked, %d subscribed in %.2fs", r.Subscribers, r.Subscribed, r.ConnectTime.Seconds())
	if r.Dropped > 0 {
		fmt.Fprintf(w, ", %d dropped during the run", r.Dropped)
	}
	if len(r.SubscribeFailed) > 0 {
		fmt.Fprintf(w, "; FAILED: %s", joinCounts(r.SubscribeFailed))
	}
	fmt.Fprintln(w)
	if r.SubscribeError != "" {
		fmt.Fprintf(w, "             first failure: %s\n", r.SubscribeError)
	}
	fmt.Fprintf(w, "publishes    %d of %d sent at %g/s over %.2fs (payload %d bytes), %d answered, %d local subscribers reported\n",
		r.Published, r.Planned, r.Rate, r.PublishTime.Seconds(), r.PayloadBytes, r.Acked, r.LocalDeliveries)
	if len(r.PublishErrors) > 0 {
		fmt.Fprintf(w, "             ERRORS: %s; first: %s\n", joinCounts(r.PublishErrors), r.PublishError)
	}
	fmt.Fprintf(w, "deliveries   %d expected, %d delivered, %d lost, %d duplicated, %d out of order",
		r.Expected, r.Delivered, r.Lost, r.Duplicated, r.OutOfOrder)
	if r.Invalid > 0 {
		fmt.Fprintf(w, ", %d not understood", r.Invalid)
	}
	fmt.Fprintf(w, "\nthroughput   %.0f deliveries/s (offered %.0f/s); ", r.DeliveriesPerSec, r.Rate*float64(r.Subscribed))
	switch {
	case r.Published == 0:
		fmt.Fprintln(w, "nothing published")
	case r.DrainComplete:
		fmt.Fprintf(w, "all in %.2fs after the last publish\n", r.Drain.Seconds())
	case r.StillArriving > 0:
		fmt.Fprintf(w, "the drain ended after %.2fs with deliveries still arriving\n"+
			"             (%d in its last %s): the server is behind, and some counted lost may only be late; a longer -drain tells\n",
			r.Drain.Seconds(), r.StillArriving, r.window)
	default:
		fmt.Fprintf(w, "the drain ended after %.2fs, nothing arriving at its end\n", r.Drain.Seconds())
	}
	l := r.Latency
	fmt.Fprintf(w, "latency      p50 %s  p90 %s  p99 %s  p99.9 %s  max %s  (read time - intended publish time)\n",
		us(l.P50), us(l.P90), us(l.P99), us(l.P999), us(l.Max))
	if r.WireInPerMessage > 0 {
		fmt.Fprintf(w, "wire         %s B/message in to the subscribers", group(r.WireInPerMessage))
		if r.WSCompression {
			fmt.Fprintf(w, "; permessage-deflate offered, %d messages compressed", r.CompressedMessages)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "publisher    lag p50 %s  p99 %s  max %s; reply p50 %s  p99 %s  max %s\n",
		us(r.PublishLag.P50), us(r.PublishLag.P99), us(r.PublishLag.Max), us(r.PublishAck.P50), us(r.PublishAck.P99), us(r.PublishAck.Max))
	if len(r.Nodes) > 1 {
		for i, n := range r.Nodes {
			fmt.Fprintf(w, "node %-7d %s: %d subscribed, %d delivered, %d lost; p50 %s  p99 %s  max %s\n",
				i+1, n.URL, n.Subscribed, n.Delivered, n.Lost, us(n.Latency.P50), us(n.Latency.P99), us(n.Latency.Max))
		}
	}
	switch {
	case r.OK && r.Lost == 0:
		fmt.Fprintln(w, "result       ok: every expected delivery made, once and in order")
		return
	case r.OK:
		fmt.Fprintf(w, "result       ok: %d deliveries lost, within the %d allowed; the others made once and in order\n", r.Lost, r.MaxLost)
		return
	}
	fmt.Fprintf(w, "result       FAILED: %s\n", strings.Join(r.Failures, "; "))
}
