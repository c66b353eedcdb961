package pool_test

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetrpc/jetrpc/pool"
)

func TestWorkers_boundedQueue(t *testing.T) {
	w := pool.NewWorkers(1, 1)
	defer w.Close()
	release := make(chan struct{})
	started := make(chan struct{})
	var ran atomic.Int32
	if !w.TrySubmit(pool.TaskFunc(func() { close(started); <-release; ran.Add(1) })) {
		t.Fatal("first task refused")
	}
	<-started // the worker is busy now
	if !w.TrySubmit(pool.TaskFunc(func() { ran.Add(1) })) {
		t.Fatal("second task refused with a free queue slot")
	}
	if w.Queued() != 1 || w.QueueCap() != 1 || w.Workers() != 1 {
		t.Fatalf("queued %d cap %d workers %d", w.Queued(), w.QueueCap(), w.Workers())
	}
	if w.TrySubmit(pool.TaskFunc(func() { ran.Add(100) })) {
		t.Fatal("third task accepted with a full queue: the queue grew")
	}
	close(release)
	w.Close()
	if got := ran.Load(); got != 2 {
		t.Fatalf("ran %d tasks, want 2", got)
	}
}

func TestWorkers_closeRunsQueuedAndRefusesNew(t *testing.T) {
	w := pool.NewWorkers(2, 100)
	var ran atomic.Int32
	for range 50 {
		if !w.TrySubmit(pool.TaskFunc(func() { time.Sleep(time.Microsecond); ran.Add(1) })) {
			t.Fatal("refused")
		}
	}
	w.Close()
	if ran.Load() != 50 {
		t.Fatalf("ran %d of 50 queued tasks before Close returned", ran.Load())
	}
	if w.TrySubmit(pool.TaskFunc(func() {})) {
		t.Fatal("accepted after Close")
	}
	w.Close() // idempotent
}

func TestWorkers_panicDoesNotKillWorker(t *testing.T) {
	w := pool.NewWorkers(1, 4)
	defer w.Close()
	done := make(chan struct{})
	w.TrySubmit(pool.TaskFunc(func() { panic("boom") }))
	w.TrySubmit(pool.TaskFunc(func() { close(done) }))
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the only worker died with the panicking task")
	}
}

func TestWorkers_concurrentSubmitAndClose(t *testing.T) {
	w := pool.NewWorkers(4, 16)
	var accepted, ran atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				if w.TrySubmit(pool.TaskFunc(func() { ran.Add(1) })) {
					accepted.Add(1)
				}
			}
		}()
	}
	go func() { time.Sleep(time.Millisecond); w.Close() }()
	wg.Wait()
	w.Close()
	if accepted.Load() != ran.Load() {
		t.Fatalf("accepted %d tasks but ran %d: a task was lost", accepted.Load(), ran.Load())
	}
}

type countTask struct{ n *atomic.Int64 }

func (c *countTask) Run() { c.n.Add(1) }

func TestWorkers_submitAllocs(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("instrumentation allocates")
	}
	w := pool.NewWorkers(2, 1024)
	defer w.Close()
	var n atomic.Int64
	task := &countTask{&n}
	if got := testing.AllocsPerRun(500, func() {
		for !w.TrySubmit(task) {
		}
	}); got != 0 {
		t.Fatalf("TrySubmit of a pointer task: %v allocs, want 0", got)
	}
}

func TestBuffers_reuseAndDrop(t *testing.T) {
	var b pool.Buffers
	buf := b.Get()
	if len(buf.B) != 0 {
		t.Fatalf("Get returned %d bytes", len(buf.B))
	}
	buf.B = append(buf.B, "hello"...)
	b.Put(buf)
	again := b.Get()
	if len(again.B) != 0 {
		t.Fatalf("Put did not reset: %q", again.B)
	}
	b.Put(again)

	small := pool.Buffers{MaxPooled: 128}
	big := small.Get()
	big.B = make([]byte, 0, 4096)
	small.Put(big) // dropped
	for range 10 {
		if g := small.Get(); cap(g.B) > 128 {
			t.Fatalf("a buffer over MaxPooled came back (cap %d)", cap(g.B))
		}
	}
	small.Put(nil) // harmless
}

func TestBuffers_allocs(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("instrumentation allocates")
	}
	var b pool.Buffers
	b.Put(b.Get())
	if got := testing.AllocsPerRun(1000, func() {
		buf := b.Get()
		buf.B = append(buf.B, "0123456789"...)
		b.Put(buf)
	}); got != 0 {
		t.Fatalf("%v allocs, want 0", got)
	}
}

// TestWorkers_newPoolTakesTasksAtOnce: a new pool without a queue takes
// as many tasks as it has workers at once, even before its goroutines
// have started.
// With a channel, a task was refused until a worker goroutine had reached its receive: engine tests flaked under -race.
func TestWorkers_newPoolTakesTasksAtOnce(t *testing.T) {
	const n = 4
	w := pool.NewWorkers(n, 0)
	defer w.Close()
	all, release := make(chan struct{}, n), make(chan struct{})
	for i := range n {
		if !w.TrySubmit(pool.TaskFunc(func() { all <- struct{}{}; <-release })) {
			t.Fatalf("task %d of %d refused by a new pool of %d workers", i+1, n, n)
		}
	}
	if w.TrySubmit(pool.TaskFunc(func() {})) {
		t.Fatal("a task beyond the workers accepted without a queue")
	}
	for range n {
		<-all // each runs on a worker of its own, all at once
	}
	close(release)
}

// TestWorkers_blockingTasksSpread: tasks that block until all of them
// run — each woken worker wakes the next — get a worker each, from a
// queue or not.
func TestWorkers_blockingTasksSpread(t *testing.T) {
	for _, queue := range []int{0, 64} {
		const n = 16
		w := pool.NewWorkers(n, queue)
		var wg sync.WaitGroup
		wg.Add(n)
		running := make(chan struct{})
		var count atomic.Int32
		for range n {
			for !w.TrySubmit(pool.TaskFunc(func() {
				if count.Add(1) == n {
					close(running)
				}
				<-running // blocks until all n run at once
				wg.Done()
			})) {
				time.Sleep(time.Millisecond)
			}
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("queue %d: %d of %d blocking tasks ran at once", queue, count.Load(), n)
		}
		w.Close()
	}
}

// TestWorkers_burstWakesFewWorkers: on one P, a burst of tasks that do
// not block is taken by a worker or two, one task after the other, not a
// worker woken per task.
func TestWorkers_burstWakesFewWorkers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	w := pool.NewWorkers(32, 64)
	defer w.Close()
	time.Sleep(10 * time.Millisecond) // the workers park
	var mu sync.Mutex
	ran := map[string]int{}
	var wg sync.WaitGroup
	const n = 16
	wg.Add(n)
	for range n {
		if !w.TrySubmit(pool.TaskFunc(func() {
			var b [64]byte
			id := strings.Fields(string(b[:runtime.Stack(b[:], false)]))[1] // "goroutine N [running]:"
			mu.Lock()
			ran[id]++
			mu.Unlock()
			wg.Done()
		})) {
			t.Fatal("refused")
		}
	}
	wg.Wait()
	if len(ran) > 4 {
		t.Errorf("%d tasks of a burst ran on %d workers, want a few: %v", n, len(ran), ran)
	}
}
