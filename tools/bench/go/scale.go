// Goroutines yielding: the Go baseline of tools/bench/scale_vs_go.sh, the like-for-like of
// scale_bench's BM_YieldingThreads.
//
// For each N in -threads, N goroutines each call runtime.Gosched() 10 times and end; the main
// goroutine waits for all of them, with GOMAXPROCS=1 (one processor, as a bubble runs on one OS
// thread). Operations per goroutine: 13 (its start, 10 yields, its end, the wait for it), as
// scale_bench counts them. Each N is run once untimed, then -runs times; prints the median
// wall time per operation:
//
//	go_scale n=<N> ns_per_op=<x>
//
// Run: go run scale.go -threads 10,1000,10000,100000 -runs 9
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

const yieldsPerGoroutine = 10
const opsPerGoroutine = yieldsPerGoroutine + 3

func yielding(n int) time.Duration {
	var wg sync.WaitGroup
	wg.Add(n)
	start := time.Now()
	for i := 0; i < n; i++ {
		go func() {
			for k := 0; k < yieldsPerGoroutine; k++ {
				runtime.Gosched()
			}
			wg.Done()
		}()
	}
	wg.Wait()
	return time.Since(start)
}

func main() {
	threads := flag.String("threads", "10,100,1000,10000,100000", "comma-separated goroutine counts")
	runs := flag.Int("runs", 9, "timed runs per count (at least 1)")
	flag.Parse()
	if *runs < 1 {
		fmt.Fprintf(os.Stderr, "go_scale: -runs must be at least 1, got %d\n", *runs)
		os.Exit(2)
	}
	var counts []int
	for _, field := range strings.Split(*threads, ",") {
		n, err := strconv.Atoi(field)
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "go_scale: -threads: not a positive count: %q\n", field)
			os.Exit(2)
		}
		counts = append(counts, n)
	}
	runtime.GOMAXPROCS(1)
	for _, n := range counts {
		yielding(n) // Untimed: grows the scheduler's goroutine cache and stacks to N.
		var ns []float64
		for r := 0; r < *runs; r++ {
			ns = append(ns, float64(yielding(n).Nanoseconds())/float64(n*opsPerGoroutine))
		}
		sort.Float64s(ns)
		fmt.Printf("go_scale n=%d ns_per_op=%.1f\n", n, ns[len(ns)/2])
	}
}
