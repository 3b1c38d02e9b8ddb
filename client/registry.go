package client

import (
	"context"
	"sync"

	"github.com/goblin-kv/goblin/target"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/uds"
)

// Transport is how the client reaches servers of one target scheme.
type Transport struct {
	// Dial opens a connection to t. It must honour ctx for the connection
	// attempt and may read the client's options (e.g. BusyPoll).
	Dial func(ctx context.Context, t target.Target, o *Options) (transport.Conn, error)
	// Message is true for message transports (ring, Aeron), where each
	// Write is one message and SBE travels without a framing header; false
	// for byte streams (Unix, TCP), where SBE messages are SOFH-framed.
	Message bool
}

var (
	registryMu sync.RWMutex
	registry   = map[target.Scheme]Transport{}
)

// RegisterTransport makes Dial use tr for targets of scheme s, replacing
// any earlier registration. uds and tcp are registered by this package;
// the ring and Aeron transports register themselves, typically from an
// init function in a file of this package or in a package the program
// imports (see the example, which compiles and runs with the tests).
func RegisterTransport(s target.Scheme, tr Transport) {
	if tr.Dial == nil {
		panic("client: RegisterTransport with a nil Dial")
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	registry[s] = tr
}

func lookupTransport(s target.Scheme) (Transport, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	tr, ok := registry[s]
	return tr, ok
}

func init() {
	sock := Transport{Dial: func(ctx context.Context, t target.Target, o *Options) (transport.Conn, error) {
		return uds.DialTarget(ctx, t, uds.DialOptions{BusyPoll: o.BusyPoll})
	}}
	RegisterTransport(target.UDS, sock)
	RegisterTransport(target.TCP, sock)
}
