// go_shares.go - a Go program with two hot functions doing work 1:3.
//
// Ground truth: main.hotOne and main.hotThree run the same serially
// dependent xorshift loop, hotThree three times as many iterations per
// round, so of their time hotOne gets 25% and hotThree 75%. Go binaries
// have no .eh_frame: a profiler must walk Go's frame pointers (kept on
// amd64) and read Go's symbol names ("main.hotOne").
//
// usage: go_shares [SECONDS]     (default: forever)
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

var sink uint64

const unit = 150000

//go:noinline
func hotOne() {
	x := sink | 1
	for i := 0; i < unit; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	sink = x
}

//go:noinline
func hotThree() {
	x := sink | 1
	for i := 0; i < 3*unit; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	sink = x
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
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	for {
		hotOne()
		hotThree()
		if secs >= 0 && time.Now().After(end) {
			break
		}
	}
}
