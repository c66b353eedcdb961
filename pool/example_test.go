package pool_test

import (
	"fmt"
	"sync"

	"github.com/jetrpc/jetrpc/pool"
)

func ExampleWorkers() {
	w := pool.NewWorkers(4, 16)
	defer w.Close()
	var wg sync.WaitGroup
	results := make([]int, 3)
	for i := range results {
		wg.Add(1)
		if !w.TrySubmit(pool.TaskFunc(func() { defer wg.Done(); results[i] = i * i })) {
			wg.Done()
			fmt.Println("server busy")
		}
	}
	wg.Wait()
	fmt.Println(results)
	// Output: [0 1 4]
}

func ExampleBuffers() {
	buf := pool.Responses.Get()
	buf.B = append(buf.B, `{"jsonrpc":"2.0","result":1,"id":1}`...)
	fmt.Println(len(buf.B))
	pool.Responses.Put(buf) // buf must not be used after this
	// Output: 35
}
