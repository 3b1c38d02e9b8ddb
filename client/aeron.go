package client

// The Aeron transport (transport/aeron), registered here so that
// client.Dial(ctx, "aeron:ipc?proto=sbe") and
// client.Dial(ctx, "aeron:udp?endpoint=H:P|control=H:P2") work in every
// program that uses this package.

import (
	"context"

	"github.com/goblin-kv/goblin/target"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/aeron"
)

func init() {
	RegisterTransport(target.Aeron, Transport{
		Message: true,
		Dial: func(ctx context.Context, t target.Target, _ *Options) (transport.Conn, error) {
			return aeron.DialTarget(ctx, t)
		},
	})
}
