package server

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/goblin-kv/goblin/target"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/uds"
)

// Builder builds the server side of one transport from a target. It runs
// before the loop starts, on any goroutine; the transport it returns is
// then used by the loop goroutine only.
type Builder func(t target.Target, env *Env) (transport.Server, error)

// Env is what a Builder gets from the server.
type Env struct {
	Options *Options
	Logger  *slog.Logger
	// Handler returns the command engine's handler for the transport named
	// name, such as "uds/resp" or "ring/sbe". Each name gets its own
	// request counters. Stream transports use it as a uds.Handler; message
	// transports (ring, Aeron) use it as a transport.MessageHandler.
	Handler func(name string) EngineHandler
	// SocketBudget bounds the buffer memory of every socket listener's
	// clients together (Options.MaxClientMemory).
	SocketBudget *uds.Budget
}

var (
	registryMu sync.RWMutex
	registry   = map[target.Scheme]Builder{}
)

// Register makes a transport available to Options.Listen under scheme. A
// transport package's server side registers itself from the server
// package (see transports.go), in a few lines:
//
//	func init() { Register(target.Ring, buildRing) }
func Register(scheme target.Scheme, b Builder) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[scheme]; dup {
		panic(fmt.Sprintf("server: transport %q registered twice", scheme))
	}
	registry[scheme] = b
}

// Registered reports whether a transport is registered for scheme.
func Registered(scheme target.Scheme) bool {
	registryMu.RLock()
	defer registryMu.RUnlock()
	_, ok := registry[scheme]
	return ok
}

// Build builds the transport for t with the registered Builder.
func Build(t target.Target, env *Env) (transport.Server, error) {
	registryMu.RLock()
	b, ok := registry[t.Scheme]
	registryMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: no %s transport in this build", ErrOptions, t.Scheme)
	}
	return b(t, env)
}
