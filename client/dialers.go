package client

import (
	"context"

	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/uds"
)

// dialer is how the client reaches servers of one target scheme.
type dialer struct {
	// dial opens a connection to t. It must honour ctx for the connection
	// attempt and may read the client's options (e.g. BusyPoll).
	dial func(ctx context.Context, t transport.Target, o *Options) (transport.Conn, error)
	// message is true for message transports (ring, Aeron), where each
	// Write is one message and SBE travels without a framing header; false
	// for byte streams (Unix, TCP), where SBE messages are SOFH-framed.
	message bool
}

// lookupDialer finds the dialer of a scheme (tests replace it).
var lookupDialer = dialerFor

// dialerFor returns the dialer of scheme s. Sockets are built in; the ring
// and Aeron transports are the ones a linked package registered (importing
// transport/ring or transport/aeron), so that a socket client links
// neither.
func dialerFor(s transport.Scheme) (dialer, error) {
	switch s {
	case transport.UDS, transport.TCP, transport.TLS:
		return dialer{dial: dialSocket}, nil
	}
	d, err := transport.LookupDialer(s)
	if err != nil {
		return dialer{}, err
	}
	return dialer{message: d.Message, dial: func(ctx context.Context, t transport.Target, _ *Options) (transport.Conn, error) {
		return d.Dial(ctx, t)
	}}, nil
}

func dialSocket(ctx context.Context, t transport.Target, o *Options) (transport.Conn, error) {
	return uds.DialTarget(ctx, t, uds.DialOptions{BusyPoll: o.BusyPoll, TLS: o.TLS})
}
