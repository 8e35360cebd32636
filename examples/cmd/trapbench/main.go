// Command trapbench calls one small Go function in a loop and prints the time per call, so that
// the cost of a uprobe on that function (the trap, plus the program it runs) can be measured:
// run it without a probe and with one, and subtract (scripts/bench-probes.sh does).
//
//	trapbench -n 1000000 -work-bytes 0        # back-to-back calls: hot caches
//	trapbench -n 200000 -work-bytes 4194304   # 4 MiB touched between calls: cold caches
//
// Output, one JSON line: {"calls":1000000,"work_bytes":0,"ns_per_call":12.3,"cpu_ns_per_call":12.1}
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"syscall"
	"time"
)

var sink int

// Probed is the function a probe is attached to: not a leaf, so it has a frame and the
// stack-check prologue, as grpc-go's transport functions do.
//
//go:noinline
func Probed(x int) int {
	return leaf(x) + 1
}

//go:noinline
func leaf(x int) int {
	return x * 3
}

func cpuNs() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fmt.Fprintln(os.Stderr, "trapbench: getrusage:", err)
		os.Exit(1)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func main() {
	n := flag.Int("n", 1000000, "calls")
	work := flag.Int("work-bytes", 0, "bytes of memory touched (one byte per 64-byte line) before each call")
	flag.Parse()
	if *n <= 0 || *work < 0 {
		fmt.Fprintln(os.Stderr, "trapbench: -n must be > 0 and -work-bytes >= 0")
		os.Exit(2)
	}
	buf := make([]byte, *work)
	start, cpu0 := time.Now(), cpuNs()
	for i := 0; i < *n; i++ {
		for j := 0; j < len(buf); j += 64 {
			buf[j]++
		}
		sink += Probed(i)
	}
	elapsed, cpu := time.Since(start), cpuNs()-cpu0
	out, _ := json.Marshal(map[string]interface{}{
		"calls":           *n,
		"work_bytes":      *work,
		"ns_per_call":     float64(elapsed.Nanoseconds()) / float64(*n),
		"cpu_ns_per_call": float64(cpu) / float64(*n),
	})
	fmt.Println(string(out))
}
