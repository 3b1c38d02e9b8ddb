package client_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/goblin-kv/goblin/client"
	"github.com/goblin-kv/goblin/target"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/ring"
)

// A transport makes its targets dialable by registering a dialer for its
// scheme, usually from an init function. This is the shared-memory ring's
// registration (client/ring.go makes it, so programs need not), made again
// and used.
func ExampleRegisterTransport() {
	client.RegisterTransport(target.Ring, client.Transport{
		Message: true, // one request per Write, one reply per ReadAppend; SBE travels unframed
		Dial: func(ctx context.Context, t target.Target, o *client.Options) (transport.Conn, error) {
			return ring.DialTarget(ctx, t)
		},
	})

	dir, err := os.MkdirTemp("", "goblin-example-")
	if err != nil {
		panic(err)
	}
	tgt := "ring://" + filepath.Join(dir, "ring") + "?proto=sbe"
	stop := serve(dir, tgt)
	defer stop()

	ctx := context.Background()
	c, err := client.Dial(ctx, tgt)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	v, err := c.Do(ctx, "PING")
	fmt.Println(v, err)
	// Output: PONG <nil>
}
