package client

// The shared-memory ring transport (transport/ring), registered here so
// that client.Dial(ctx, "ring:///dev/shm/goblin?proto=sbe") works in every
// program that uses this package.

import (
	"context"

	"github.com/goblin-kv/goblin/target"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/ring"
)

func init() {
	RegisterTransport(target.Ring, Transport{
		Message: true,
		Dial: func(ctx context.Context, t target.Target, _ *Options) (transport.Conn, error) {
			return ring.DialTarget(ctx, t)
		},
	})
}
