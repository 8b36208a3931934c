// go_stacks.go - a Go program whose stacks cross Go's stack switches.
//
// Ground truth for unwinding (t_go_stacks.sh): every sample's stack must
// end at a thread's or goroutine's first function (runtime.goexit,
// runtime.mstart, runtime.rt0_go). Four goroutines each run one kind of
// work, so samples land in all the places where the runtime switches
// stacks:
//   - main.allocLoop allocates (GC work: runtime.systemstack onto g0,
//     mark assists, sweeping),
//   - main.chanPing/chanPong hand a token back and forth (parking:
//     runtime.mcall to the scheduler on g0),
//   - main.deepRecurse recurses 100 frames deep in fresh goroutines
//     with big frames, so each goroutine's stack grows many times
//     (runtime.morestack -> runtime.newstack on g0),
//   - main.spinLeaf is a plain hot leaf called from main.spinLoop.
// GOMAXPROCS is left to the caller (the test sets 2).
//
// usage: go_stacks [SECONDS]     (default: forever)
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

var sink []byte
var isink uint64

//go:noinline
func allocLoop(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		for i := 0; i < 1000; i++ {
			sink = make([]byte, 64+i%512)
		}
	}
}

//go:noinline
func chanPing(in <-chan int, out chan<- int, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case v := <-in:
			out <- v + 1
		}
	}
}

//go:noinline
func deepRecurse(n int) uint64 {
	var pad [64]uint64 // a big frame: the goroutine's stack grows often
	pad[n%64] = uint64(n)
	if n == 0 {
		return pad[0]
	}
	return deepRecurse(n-1) + pad[n%64]
}

//go:noinline
func deepLoop(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		done := make(chan uint64)
		go func() { done <- deepRecurse(100) }() // a fresh, small stack each time
		isink += <-done
	}
}

//go:noinline
func spinLeaf(x uint64) uint64 {
	for i := 0; i < 20000; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

//go:noinline
func spinLoop(stop <-chan struct{}) {
	x := uint64(1)
	for {
		select {
		case <-stop:
			isink += x
			return
		default:
		}
		x = spinLeaf(x)
	}
}

func main() {
	secs := -1.0
	if len(os.Args) > 1 {
		v, err := strconv.ParseFloat(os.Args[1], 64)
		if err != nil || v < 0 {
			fmt.Fprintf(os.Stderr, "%s: invalid number %q\n", os.Args[0], os.Args[1])
			os.Exit(2)
		}
		secs = v
	}
	stop := make(chan struct{})
	a, b := make(chan int), make(chan int)
	go allocLoop(stop)
	go chanPing(a, b, stop)
	go chanPing(b, a, stop)
	go deepLoop(stop)
	go spinLoop(stop)
	a <- 0
	if secs >= 0 {
		time.Sleep(time.Duration(secs * float64(time.Second)))
	} else {
		select {}
	}
	close(stop)
}
