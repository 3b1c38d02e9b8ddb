// Command aeron-flood sends malformed Aeron-shaped datagrams (package
// aeron/internal/flood) to a subscription's endpoint and a publication's
// control address, as an attacker on the network could, to check that a
// media driver survives them:
//
//	go run ./aeron/cmd/aeron-flood -endpoint 127.0.0.1:40123 -control 127.0.0.1:40124 -duration 3m
//
// It prints what it sent, by kind, when the duration is over or on SIGINT.
// Send it only to drivers you run.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/goblin-kv/goblin/aeron/internal/flood"
)

func main() {
	endpoint := flag.String("endpoint", "", "`host:port` of the subscription's data endpoint (required)")
	control := flag.String("control", "", "`host:port` of the publication's control address (empty: none)")
	stream := flag.Int("stream", 1001, "stream `id` most frames name")
	rate := flag.Int("rate", 30000, "datagrams per second")
	duration := flag.Duration("duration", time.Minute, "how long to send (0: until SIGINT)")
	seed := flag.Uint64("seed", 1, "generator seed")
	kinds := flag.String("kinds", "", "comma-separated `kinds` to send (empty: all): "+kindList())
	flag.Parse()
	var o flood.Options
	var err error
	if o.Endpoint, err = netip.ParseAddrPort(*endpoint); err != nil {
		log.Fatalf("aeron-flood: -endpoint: %v", err)
	}
	if *control != "" {
		if o.Control, err = netip.ParseAddrPort(*control); err != nil {
			log.Fatalf("aeron-flood: -control: %v", err)
		}
	}
	o.StreamID, o.Rate, o.Seed = int32(*stream), *rate, *seed
	if *kinds != "" {
		for _, name := range strings.Split(*kinds, ",") {
			k, ok := flood.ParseKind(name)
			if !ok {
				log.Fatalf("aeron-flood: -kinds: unknown kind %q (want %s)", name, kindList())
			}
			o.Kinds = append(o.Kinds, k)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	start := time.Now()
	st, err := flood.Run(ctx, o)
	if err != nil {
		log.Fatalf("aeron-flood: %v", err)
	}
	el := time.Since(start)
	fmt.Printf("sent %d datagrams in %.1fs (%.0f/s), %d send errors\n", st.Sent, el.Seconds(),
		float64(st.Sent)/el.Seconds(), st.SendErrors)
	for k := range flood.NumKinds {
		fmt.Printf("  %-16s %d\n", k, st.ByKind[k])
	}
}

func kindList() string {
	var names []string
	for k := range flood.NumKinds {
		names = append(names, k.String())
	}
	return strings.Join(names, ", ")
}
