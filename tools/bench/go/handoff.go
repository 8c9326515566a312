// A goroutine channel ping-pong: the Go baseline of tools/bench/handoff_vs_go.sh.
//
// Two goroutines hand a value back and forth over two unbuffered channels, `-rounds` round trips
// (two hand-offs each), with GOMAXPROCS=1 (one processor, as a bubble runs on one OS thread).
// Prints the wall and CPU time per hand-off in the format the script reads:
//
//	go_handoff wall_ns_per_handoff=<x> cpu_ns_per_handoff=<y> rounds=<n>
//
// Run: go run handoff.go -rounds 2000000
package main

import (
	"flag"
	"fmt"
	"runtime"
	"syscall"
	"time"
)

func cpuNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func pingPong(rounds int) {
	ping := make(chan int)
	pong := make(chan int)
	done := make(chan struct{})
	go func() {
		for i := 0; i < rounds; i++ {
			pong <- <-ping
		}
		close(done)
	}()
	for i := 0; i < rounds; i++ {
		ping <- i
		<-pong
	}
	<-done
}

func main() {
	rounds := flag.Int("rounds", 2000000, "round trips (two hand-offs each)")
	flag.Parse()
	runtime.GOMAXPROCS(1)
	pingPong(*rounds / 10) // Warm up: the scheduler's structures, the channels' code paths.
	startCPU := cpuNanos()
	start := time.Now()
	pingPong(*rounds)
	wall := time.Since(start).Nanoseconds()
	cpu := cpuNanos() - startCPU
	handoffs := float64(2 * *rounds)
	fmt.Printf("go_handoff wall_ns_per_handoff=%.1f cpu_ns_per_handoff=%.1f rounds=%d\n",
		float64(wall)/handoffs, float64(cpu)/handoffs, *rounds)
}
