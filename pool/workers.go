package pool

import (
	"log/slog"
	"runtime"
	"sync"
)

// Defaults of NewWorkers.
var (
	// DefaultWorkers is the number of worker goroutines: enough for
	// handlers that block on I/O, 32 per GOMAXPROCS and at least 256 (an
	// idle worker costs a few KiB of stack).
	DefaultWorkers = max(256, 32*runtime.GOMAXPROCS(0))
	// DefaultQueue is the number of tasks that may wait for a worker.
	DefaultQueue = 4096
)

// Task is work for a worker. Submitting a pointer to a pooled struct that
// implements Task costs no allocation; a TaskFunc closure costs one.
type Task interface {
	// Run does the work. A panic in Run is recovered and logged; the
	// worker goes on.
	Run()
}

// TaskFunc adapts a function to Task.
type TaskFunc func()

// Run calls f.
func (f TaskFunc) Run() { f() }

var _ Task = TaskFunc(nil)

// Workers is a fixed set of goroutines fed by a bounded queue. It is safe
// from any goroutine.
//
// A worker is running a task, searching (woken, or done with a task and
// looking for the next), or parked. A task submitted while a worker is
// searching wakes no one: that worker takes it; else it wakes one parked
// worker. A worker that takes a task while more wait and no one else is
// searching wakes the next. So a burst of tasks submitted at once (the
// messages of one read) wakes a worker or two that take them one after
// the other when they do not block, where a channel would wake a worker
// per task; and tasks that block (a database call) still spread over as
// many workers as they need, each woken by the one before.
type Workers struct {
	mu        sync.Mutex
	queue     []Task    // ring buffer of the tasks waiting, capacity cap(queue); guarded by mu
	head, n   int       // the oldest waiting task, and their number; guarded by mu
	room      int       // immutable; the tasks that may wait beyond those the free workers take at once
	parked    []*parked // parked workers, each waiting on its wake; guarded by mu
	searching int       // workers awake and not running a task; guarded by mu
	closed    bool      // guarded by mu
	done      sync.WaitGroup
	workers   int // immutable
}

// parked is a parked worker's wake-up call.
type parked struct{ wake chan struct{} }

// NewWorkers starts workers goroutines with a queue of queue tasks.
// workers ≤ 0 means DefaultWorkers; queue < 0 means DefaultQueue (0 is a
// queue that only accepts a task when a worker is idle).
func NewWorkers(workers, queue int) *Workers {
	if workers <= 0 {
		workers = DefaultWorkers
	}
	if queue < 0 {
		queue = DefaultQueue
	}
	w := &Workers{
		queue:     make([]Task, queue+workers), // the room, and a task for each free worker
		room:      queue,
		parked:    make([]*parked, 0, workers),
		searching: workers, // as they start: each looks for work before it parks
		workers:   workers,
	}
	w.done.Add(workers)
	for range workers {
		go w.loop(&parked{wake: make(chan struct{}, 1)})
	}
	return w
}

func (w *Workers) loop(me *parked) {
	defer w.done.Done()
	w.mu.Lock()
	for {
		if w.n > 0 {
			t := w.queue[w.head]
			w.queue[w.head] = nil
			w.head, w.n = (w.head+1)%len(w.queue), w.n-1
			w.searching--
			wake := w.wakeOneLocked(w.n > 0)
			w.mu.Unlock()
			if wake != nil {
				wake.wake <- struct{}{}
			}
			run(t)
			w.mu.Lock()
			w.searching++
			continue
		}
		if w.closed {
			w.searching--
			w.mu.Unlock()
			return
		}
		w.searching--
		w.parked = append(w.parked, me)
		w.mu.Unlock()
		<-me.wake // the waker counted it searching
		w.mu.Lock()
	}
}

// wakeOneLocked returns a parked worker to wake, counted searching, when
// work waits (more) and no worker is searching; else nil. w.mu must be
// held; the caller signals the worker's wake once it has unlocked.
func (w *Workers) wakeOneLocked(more bool) *parked {
	if !more || w.searching > 0 || len(w.parked) == 0 {
		return nil
	}
	p := w.parked[len(w.parked)-1]
	w.parked = w.parked[:len(w.parked)-1]
	w.searching++
	return p
}

func run(t Task) {
	defer func() {
		if v := recover(); v != nil {
			slog.Error("jetrpc: worker task panicked", "panic", v)
		}
	}()
	t.Run()
}

// TrySubmit queues t for a worker and reports whether it was queued. It
// never blocks: it returns false at once when the queue is full or the
// pool is closed, and the caller must then handle t itself (typically by
// answering "server busy"). The queue is full when the waiting tasks are
// as many as its capacity (NewWorkers' queue) and the workers free to
// take them at once (parked or searching) together.
func (w *Workers) TrySubmit(t Task) bool {
	w.mu.Lock()
	if w.closed || w.n >= w.room+len(w.parked)+w.searching {
		w.mu.Unlock()
		return false
	}
	w.queue[(w.head+w.n)%len(w.queue)] = t
	w.n++
	wake := w.wakeOneLocked(true)
	w.mu.Unlock()
	if wake != nil {
		wake.wake <- struct{}{}
	}
	return true
}

// Close stops accepting tasks, lets the queued ones run and waits for the
// workers to exit. It is idempotent.
func (w *Workers) Close() {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		for _, p := range w.parked {
			w.searching++
			p.wake <- struct{}{} // buffered: never blocks
		}
		clear(w.parked)
		w.parked = w.parked[:0]
	}
	w.mu.Unlock()
	w.done.Wait()
}

// Workers returns the number of worker goroutines.
func (w *Workers) Workers() int { return w.workers }

// Queued returns the number of tasks waiting for a worker now.
func (w *Workers) Queued() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// QueueCap returns the capacity of the queue: the tasks that may wait
// beyond those the free workers take at once.
func (w *Workers) QueueCap() int { return w.room }
