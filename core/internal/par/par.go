// Package par runs a loop's iterations on a few goroutines: the one
// pattern the storage code uses to decode columns and open files in
// parallel. It owns nothing else.
package par

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// Do calls fn(worker, i) for every i in [0, n), on up to workers
// goroutines (1 or less runs them in order on the caller's goroutine),
// worker being the goroutine's number in [0, workers). It returns the
// errors by i (nil when all are nil); a panic in fn is returned as the
// error of its i. CPU-bound work passes CPUs(n) workers; work that waits
// for the disk may pass more.
func Do(n, workers int, fn func(worker, i int) error) []error {
	workers = min(workers, n)
	errs := make([]error, n)
	failed := false
	call := func(w, i int) {
		defer func() {
			if r := recover(); r != nil {
				errs[i] = fmt.Errorf("panic: %v", r)
			}
		}()
		errs[i] = fn(w, i)
	}
	if workers <= 1 {
		for i := range n {
			call(0, i)
		}
	} else {
		var next atomic.Int64
		var wg sync.WaitGroup
		work := func(w int) {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				call(w, i)
			}
		}
		// The caller is worker 0: one goroutine fewer to start, and the
		// caller is not put to sleep while the work is young (a filtered
		// scan called Do a few hundred times, and its futex calls were a
		// tenth of its time).
		for w := 1; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				work(w)
			}()
		}
		work(0)
		wg.Wait()
	}
	for _, err := range errs {
		failed = failed || err != nil
	}
	if !failed {
		return nil
	}
	return errs
}

// CPUs returns n, at most GOMAXPROCS: the workers for n CPU-bound tasks.
func CPUs(n int) int { return min(n, runtime.GOMAXPROCS(0)) }
