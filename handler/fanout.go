package handler

import (
	"runtime"
	"sync"
)

// NOTE: a message to a topic with many local subscribers is sent by
// several goroutines, each to a contiguous part of the subscribers: the
// cost of a delivery is queuing it on the subscriber's connection and
// waking its event loop, and one goroutine doing it for 10,000
// subscribers leaves the other processors idle while the loops wait for
// work. The parts are tasks of a pooled fanJob, started from func values
// made once per task, so that a parallel fan-out allocates nothing in
// steady state.

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
	job     *fanJob
	subs    []*Subscription
	payload []byte
	n       int    // deliveries made
	run     func() // t.send, made once
}

func (t *fanTask) send() {
	t.n = sendAll(t.subs, t.payload)
	t.job.wg.Done()
}

var fanJobs = sync.Pool{New: func() any { return new(fanJob) }}

// fanOutParallel sends payload to subs from parts goroutines (the
// caller's one of them) and returns how many took it, once all have.
func fanOutParallel(subs []*Subscription, payload []byte, parts int) int {
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
		t.subs, t.payload = subs[i*size:min((i+1)*size, len(subs))], payload
		go t.run()
	}
	n := sendAll(subs[:size], payload)
	j.wg.Wait()
	for i := 1; i < parts; i++ {
		t := j.tasks[i]
		n += t.n
		t.subs, t.payload = nil, nil
	}
	fanJobs.Put(j)
	return n
}
