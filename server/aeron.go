package server

// The Aeron transport (transport/aeron), built like the ring in ring.go.

import (
	"fmt"

	"github.com/goblin-kv/goblin/target"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/aeron"
)

// buildAeron serves an aeron:ipc or aeron:udp target: one request per
// Aeron message, executed inline by the engine.
func buildAeron(t target.Target, env *Env) (transport.Server, error) {
	o, err := aeron.ConfigFor(t)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	o.Handler = env.Handler("aeron-" + t.Address + "/" + t.Proto.String())
	o.Logger = env.Logger
	o.MaxRequest = env.Options.MaxInput // the same cap as a socket client's unfinished request
	// The same total as the socket clients', counted apart for each Aeron
	// listener.
	o.MaxClientMemory = env.Options.MaxClientMemory
	return aeron.Listen(o)
}
