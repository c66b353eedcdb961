package pool_test

import (
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
