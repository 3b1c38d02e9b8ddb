package client

import (
	"context"

	"github.com/goblin-kv/goblin/target"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/aeron"
	"github.com/goblin-kv/goblin/transport/ring"
	"github.com/goblin-kv/goblin/transport/uds"
)

// dialer is how the client reaches servers of one target scheme.
type dialer struct {
	// dial opens a connection to t. It must honour ctx for the connection
	// attempt and may read the client's options (e.g. BusyPoll).
	dial func(ctx context.Context, t target.Target, o *Options) (transport.Conn, error)
	// message is true for message transports (ring, Aeron), where each
	// Write is one message and SBE travels without a framing header; false
	// for byte streams (Unix, TCP), where SBE messages are SOFH-framed.
	message bool
}

// dialers holds every transport the client speaks, by target scheme: a
// fixed table (tests swap an entry), not a registry. Adding a transport is
// a line here and its DialTarget.
var dialers = map[target.Scheme]dialer{
	target.UDS:   {dial: dialSocket},
	target.TCP:   {dial: dialSocket},
	target.Ring:  {dial: dialRing, message: true},
	target.Aeron: {dial: dialAeron, message: true},
}

func dialSocket(ctx context.Context, t target.Target, o *Options) (transport.Conn, error) {
	return uds.DialTarget(ctx, t, uds.DialOptions{BusyPoll: o.BusyPoll})
}

// dialRing dials the shared-memory ring (transport/ring), e.g.
// ring:///dev/shm/goblin?proto=sbe.
func dialRing(ctx context.Context, t target.Target, _ *Options) (transport.Conn, error) {
	return ring.DialTarget(ctx, t)
}

// dialAeron dials Aeron IPC or UDP (transport/aeron), e.g. aeron:ipc?proto=sbe
// or aeron:udp?endpoint=H:P|control=H:P2.
func dialAeron(ctx context.Context, t target.Target, _ *Options) (transport.Conn, error) {
	return aeron.DialTarget(ctx, t)
}
