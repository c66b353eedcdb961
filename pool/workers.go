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
type Workers struct {
	tasks   chan Task    // immutable; never closed while TrySubmit may run
	mu      sync.RWMutex // guards closed against TrySubmit
	closed  bool         // guarded by mu
	done    sync.WaitGroup
	workers int // immutable
}

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
	w := &Workers{tasks: make(chan Task, queue), workers: workers}
	w.done.Add(workers)
	for range workers {
		go w.loop()
	}
	return w
}

func (w *Workers) loop() {
	defer w.done.Done()
	for t := range w.tasks {
		run(t)
	}
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
// answering "server busy").
func (w *Workers) TrySubmit(t Task) bool {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		return false
	}
	select {
	case w.tasks <- t:
		return true
	default:
		return false
	}
}

// Close stops accepting tasks, lets the queued ones run and waits for the
// workers to exit. It is idempotent.
func (w *Workers) Close() {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.tasks)
	}
	w.mu.Unlock()
	w.done.Wait()
}

// Workers returns the number of worker goroutines.
func (w *Workers) Workers() int { return w.workers }

// Queued returns the number of tasks waiting for a worker now.
func (w *Workers) Queued() int { return len(w.tasks) }

// QueueCap returns the capacity of the queue.
func (w *Workers) QueueCap() int { return cap(w.tasks) }
