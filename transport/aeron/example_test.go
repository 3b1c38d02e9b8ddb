package aeron_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/goblin-kv/goblin/client"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/aeron"
)

// A client of a server listening on aeron:udp: the same target string on
// both sides, the server's address in both endpoint and control. Without
// dir= the client starts a media driver of its own.
func Example_udp() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, "aeron:udp?endpoint=10.0.0.1:40123|control=10.0.0.1:40124|proto=sbe")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if err := c.Set(ctx, "greeting", []byte("hello"), client.SetOptions{}); err != nil {
		log.Fatal(err)
	}
}

// The server side of a target, as goblin-server builds it.
func ExampleConfigFor() {
	t, err := transport.ParseTarget("aeron:udp?endpoint=10.0.0.1:40123|control=10.0.0.1:40124|proto=sbe|profile=spin")
	if err != nil {
		log.Fatal(err)
	}
	o, err := aeron.ConfigFor(t)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(o.Media, o.Endpoint, o.Control, o.Proto, o.Profile, o.Stream, o.ReplyStream)
	// Output: udp 10.0.0.1:40123 10.0.0.1:40124 sbe spin 1001 1002
}
