// A CPU-busy Go program that calls C (cgo), for the sampler's hazard
// test: goroutines run on stacks of their own (small, growing, moved by
// the runtime), are preempted by signals (SIGURG) and the garbage
// collector runs; the runtime requires every signal handler to run on the
// signal stack. Prints one line on stdout; exits 0.
package main

/*
static int hz_go_cadd(int a, int b) { return a + b; }
*/
import "C"

import (
	"os"
	"strconv"
	"sync"
)

//go:noinline
func goBurn(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i % 7
		if i%50000 == 0 {
			s += int(C.hz_go_cadd(C.int(i&1023), 1))
		}
		if i%2000 == 0 {
			b := make([]byte, 512)
			s += len(b)
		}
	}
	return s
}

func main() {
	n := 100000000
	if len(os.Args) > 1 {
		if v, err := strconv.Atoi(os.Args[1]); err == nil {
			n = v
		}
	}
	var wg sync.WaitGroup
	res := make([]int, 4)
	for g := range res {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			res[g] = goBurn(n)
		}(g)
	}
	wg.Wait()
	for _, r := range res {
		if r <= 0 {
			os.Exit(3)
		}
	}
	os.Stdout.WriteString("go-burn done\n")
}
