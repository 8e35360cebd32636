// Command execbench measures what an exec costs: it runs each program given, one after the other,
// with fork, exec and wait (syscall.ForkExec, syscall.Wait4: no shell, no os/exec goroutines), and
// prints one JSON line per program with the microseconds from the fork to the end of the wait.
// scripts/bench-exec-hold.sh uses it to measure what holding execs (gospan's
// discovery.hold_new_binaries) adds to an exec.
//
//	execbench [-arg A]... PROGRAM...
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"syscall"
	"time"
)

type args []string

func (a *args) String() string     { return fmt.Sprint(*a) }
func (a *args) Set(s string) error { *a = append(*a, s); return nil }

func main() {
	var extra args
	flag.Var(&extra, "arg", "an argument given to every program (repeatable)")
	flag.Parse()
	devNull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "execbench:", err)
		os.Exit(1)
	}
	out := json.NewEncoder(os.Stdout)
	for _, prog := range flag.Args() {
		argv := append([]string{prog}, extra...)
		t0 := time.Now()
		pid, err := syscall.ForkExec(prog, argv, &syscall.ProcAttr{Files: []uintptr{devNull.Fd(), devNull.Fd(), devNull.Fd()}})
		if err != nil {
			fmt.Fprintln(os.Stderr, "execbench:", prog, err)
			os.Exit(1)
		}
		var ws syscall.WaitStatus
		if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
			fmt.Fprintln(os.Stderr, "execbench: wait", prog, err)
			os.Exit(1)
		}
		out.Encode(map[string]any{"program": prog, "us": float64(time.Since(t0).Nanoseconds()) / 1e3, "exit": ws.ExitStatus()})
	}
}
