package server

// The shared-memory ring transport (transport/ring), built like the
// socket transports in transports.go.

import (
	"fmt"

	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/ring"
)

// buildRing serves a ring:// target: one request message per record (or a
// run of records, for a long one), each executed inline by the engine.
func buildRing(t transport.Target, env *Env) (transport.Server, error) {
	o, err := ring.ConfigFor(t)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	o.Handler = env.Handler("ring/" + t.Proto.String())
	// The longest request a ring client may send is the longest a socket
	// client may (--client-input-limit).
	if env.Options != nil {
		o.MaxMessage = env.Options.MaxInput
	}
	return ring.Listen(o)
}

// The ring is invisible to the kernel, so it wakes a parked loop with its
// doorbell (transport/ring/doorbell.go) rather than being Waitable.
var _ Sleeper = (*ring.Server)(nil)

// A save's rests (Loop.Rest) do not count among the ring's parks.
var _ RestPreparer = (*ring.Server)(nil)
