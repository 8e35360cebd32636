// Command stackgrowth calls Probed at every recursion depth from 0 to -depth, each in a new goroutine,
// after a line on stdin (so that a probe can be attached first), and prints how many calls of Probed it
// made. Probed is called from the same frame that would call deep(n-1), so at each size the goroutine's
// stack grows through, one call of Probed is the call whose stack check grows it (StackCheckJumpIT).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
)

var sink int

// Probed is the function the probe is attached to (not a leaf: it has a frame and a stack check).
//
//go:noinline
func Probed(x int) int {
	return leaf(x) + 1
}

//go:noinline
func leaf(x int) int {
	return x * 3
}

//go:noinline
func deep(n int) int {
	if n == 0 {
		return Probed(n)
	}
	return deep(n-1) + 1
}

func main() {
	depth := flag.Int("depth", 4000, "deepest recursion")
	flag.Parse()
	bufio.NewReader(os.Stdin).ReadString('\n')
	calls := 0
	done := make(chan int)
	for n := 0; n <= *depth; n++ {
		go func(n int) { done <- deep(n) }(n)
		sink += <-done
		calls++
	}
	fmt.Println(calls)
}
