package topics

import (
	"runtime"
	"sync"

	"github.com/jetrpc/jetrpc/handler"
)

// NOTE: the fan-out of one message to a topic's local subscribers
// (fanOut), prepared once (handler.NewPrepared: the payload copied, and
// compressed once if a subscriber's connection compresses) and sent to
// each with Subscription.NotifyPrepared. A message to a topic
// with many local subscribers is sent by several goroutines, each to a
// contiguous part of the subscribers: the cost of a delivery is queuing
// it on the subscriber's connection and waking its event loop, and one
// goroutine doing it for 10,000 subscribers leaves the other processors
// idle while the loops wait for work. The parts are tasks of a pooled
// fanJob, started from func values made once per task, so that a
// parallel fan-out allocates nothing in steady state (nor does the
// pooled Prepared).

// fanOut sends payload, one valid compact JSON value, to t's
// subscribers; it returns how many connections took it. A topic with
// many subscribers is sent to by several goroutines, each a part of the
// subscribers; fanOut returns once all are sent to, so that each
// subscriber gets the messages of one caller in order.
func (h *Topics) fanOut(t *topic, payload []byte) int {
	subs := *t.subs.Load()
	if len(subs) == 0 {
		return 0
	}
	msg := handler.NewPrepared(payload)
	var n int
	if parts := fanOutParts(len(subs)); parts > 1 {
		n = fanOutParallel(subs, msg, parts)
	} else {
		n = sendAll(subs, msg)
	}
	msg.Release() // the connections that queued it hold their references
	h.delivered.Add(uint64(n))
	h.dropped.Add(uint64(len(subs) - n))
	return n
}

// sendAll sends msg to subs; it returns how many took it.
func sendAll(subs []*handler.Subscription, msg *handler.Prepared) int {
	n := 0
	for _, s := range subs {
		if s.NotifyPrepared(msg) == nil {
			n++
		}
	}
	return n
}

// fanOutPart is the fewest subscribers a goroutine of a parallel fan-out
// sends to: below it, the goroutine costs more than it saves.
const fanOutPart = 1024

// fanOutParts returns how many goroutines send a message to subs
// subscribers: one per fanOutPart of them, at most one per processor.
func fanOutParts(subs int) int {
	return min(subs/fanOutPart, runtime.GOMAXPROCS(0))
}

// fanJob is one parallel fan-out.
type fanJob struct {
	wg    sync.WaitGroup
	tasks []*fanTask // pointers: each task's run is bound to its address
}

// fanTask is one goroutine's part of a fanJob.
type fanTask struct {
	job  *fanJob
	subs []*handler.Subscription
	msg  *handler.Prepared
	n    int    // deliveries made
	run  func() // t.send, made once
}

func (t *fanTask) send() {
	t.n = sendAll(t.subs, t.msg)
	t.job.wg.Done()
}

var fanJobs = sync.Pool{New: func() any { return new(fanJob) }}

// fanOutParallel sends msg to subs from parts goroutines (the caller's
// one of them) and returns how many took it, once all have.
func fanOutParallel(subs []*handler.Subscription, msg *handler.Prepared, parts int) int {
	j := fanJobs.Get().(*fanJob)
	for len(j.tasks) < parts {
		t := &fanTask{job: j}
		t.run = t.send
		j.tasks = append(j.tasks, t)
	}
	size := (len(subs) + parts - 1) / parts
	j.wg.Add(parts - 1)
	for i := 1; i < parts; i++ {
		t := j.tasks[i]
		t.subs, t.msg = subs[i*size:min((i+1)*size, len(subs))], msg
		go t.run()
	}
	n := sendAll(subs[:size], msg)
	j.wg.Wait()
	for i := 1; i < parts; i++ {
		t := j.tasks[i]
		n += t.n
		t.subs, t.msg = nil, nil
	}
	fanJobs.Put(j)
	return n
}
