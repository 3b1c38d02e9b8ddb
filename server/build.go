package server

import (
	"fmt"
	"log/slog"

	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/uds"
)

// Builder builds the server side of one transport from a target. It runs
// before the loop starts, on any goroutine; the transport it returns is
// then used by the loop goroutine only.
type Builder func(t transport.Target, env *Env) (transport.Server, error)

// Env is what a Builder gets from the server.
type Env struct {
	Options *Options
	Logger  *slog.Logger
	// Handler returns the command engine's handler for the transport named
	// name, such as "uds/resp" or "ring/sbe". Each name gets its own
	// request counters. Stream transports use it as a
	// transport.StreamHandler; message transports (ring, Aeron) use it as
	// a transport.MessageHandler.
	Handler func(name string) EngineHandler
	// SocketBudget bounds the buffer memory of every socket listener's
	// clients together (Options.MaxClientMemory).
	SocketBudget *uds.Budget
	// Protected reports whether protected mode refuses TCP clients from
	// beyond the loopback interface now (see Options.ProtectedModeOff);
	// called on the loop goroutine as such a client is accepted.
	Protected func() bool
	// TLS is the configuration TLS listeners serve (nil when no listener
	// is a tls:// target).
	TLS *uds.TLSSource
}

// builders holds every transport the server serves, by target scheme: a
// fixed table (a test takes an entry out), not a registry. Adding a
// transport is a Builder and a line here.
//
// Unlike the client's, the server's transports do not opt in by import: a
// server is the program that serves every --listen target, its Options
// name transports in text (a flag or a config line) that no import can
// check at build time, and a server built without one would fail only
// when an operator asks for it. So package server links every transport.
var builders = map[transport.Scheme]Builder{
	transport.UDS:   buildSocket,
	transport.TCP:   buildSocket,
	transport.TLS:   buildSocket,
	transport.Ring:  buildRing,
	transport.Aeron: buildAeron,
}

// Build builds the transport for t with its scheme's Builder.
func Build(t transport.Target, env *Env) (transport.Server, error) {
	b, ok := builders[t.Scheme]
	if !ok {
		return nil, fmt.Errorf("%w: no %s transport in this build", ErrOptions, t.Scheme)
	}
	return b(t, env)
}
