// Command busping measures PING latency (p50, p99 over 5,000 sequential
// PINGs, after 500 of warm-up) against each address given, in turn, five
// rounds: a standalone goblin-server beside a cluster-bus node at rest, so
// the bus's cost on a resting node's latency shows in one run
// (docs/cluster.md, "Threads"). benchmarks/busping/run.sh starts both.
package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"sort"
	"time"
)

func run(addr string, n int) (p50, p99 time.Duration) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	lat := make([]time.Duration, n)
	for i := range n {
		t := time.Now()
		c.Write([]byte("PING\r\n"))
		if _, err := r.ReadString('\n'); err != nil {
			panic(err)
		}
		lat[i] = time.Since(t)
	}
	sort.Slice(lat, func(a, b int) bool { return lat[a] < lat[b] })
	return lat[n/2], lat[n*99/100]
}

func main() {
	for round := range 5 {
		for _, a := range os.Args[1:] {
			run(a, 500) // warm-up
			p50, p99 := run(a, 5000)
			fmt.Printf("round %d %s p50 %v p99 %v\n", round, a, p50, p99)
		}
	}
}
