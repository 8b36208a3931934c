// go_cgo - Go calling C calling back into Go (cgo), for mixed stacks.
//
// main.goOuter calls the C function c_middle (compiled by gcc, no frame
// pointer: only its CFI knows its frame), which spins in c_spin and then
// calls the exported Go function goCallback, which spins in
// main.goInner. Ground truth (t_go_stacks.sh): samples in c_spin have
// c_middle then main.goOuter (via runtime.cgocall) above them; samples in
// main.goInner have goCallback, c_middle and main.goOuter above them; all
// reach a thread's root.
//
// usage: go_cgo [SECONDS]     (default: forever)
package main

/*
#include <stdint.h>
extern void goCallback(uint64_t);

static uint64_t c_sink;

__attribute__((noinline)) static uint64_t c_spin(uint64_t x)
{
	for (int i = 0; i < 200000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

__attribute__((noinline)) static void c_middle(uint64_t x)
{
	c_sink = c_spin(x | 1);
	goCallback(c_sink);
}
*/
import "C"

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

var sink uint64

//go:noinline
func goInner(x uint64) uint64 {
	for i := 0; i < 200000; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

//export goCallback
func goCallback(x C.uint64_t) {
	sink += goInner(uint64(x))
}

//go:noinline
func goOuter() {
	C.c_middle(C.uint64_t(sink))
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
	for secs < 0 || time.Now().Before(end) {
		goOuter()
	}
}
