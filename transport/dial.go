package transport

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// A Dialer is the client side of one message transport, registered under
// its target scheme by the transport's package. The client library dials
// sockets (uds://, tcp://) itself; the ring and Aeron transports opt in by
// import, as image decoders do:
//
//	import _ "github.com/goblin-kv/goblin/transport/ring"  // ring:// targets
//	import _ "github.com/goblin-kv/goblin/transport/aeron" // aeron: targets
//
// so a program that only speaks sockets links neither the shared-memory
// rings nor the Aeron client and its media drivers.
type Dialer struct {
	// Dial opens a connection to t. It honours ctx for the connection
	// attempt.
	Dial func(ctx context.Context, t Target) (Conn, error)
	// Message is true for message transports, where each Write is one
	// message and SBE travels without a framing header.
	Message bool
}

// ErrNoDialer is wrapped by LookupDialer when no package linked into the
// program has registered a Dialer for a scheme.
var ErrNoDialer = errors.New("transport: no dialer for scheme")

// dialerPackages names the package that registers each opt-in scheme, for
// the error that tells a program which import it lacks.
var dialerPackages = map[Scheme]string{
	Ring:  "github.com/goblin-kv/goblin/transport/ring",
	Aeron: "github.com/goblin-kv/goblin/transport/aeron",
}

// dialers holds the registered Dialers. Registration happens in init
// functions and lookups when a client dials, never on a request's path.
var dialers struct {
	mu sync.RWMutex
	m  map[Scheme]Dialer
}

// RegisterDialer makes d the client side of scheme s. A transport package
// calls it from an init function; it panics on a nil Dial or a scheme
// registered twice (two packages claiming one scheme is a build mistake).
func RegisterDialer(s Scheme, d Dialer) {
	if d.Dial == nil {
		panic(fmt.Sprintf("transport: RegisterDialer(%q) with a nil Dial", s))
	}
	dialers.mu.Lock()
	defer dialers.mu.Unlock()
	if _, dup := dialers.m[s]; dup {
		panic(fmt.Sprintf("transport: a dialer for %q is registered twice", s))
	}
	if dialers.m == nil {
		dialers.m = map[Scheme]Dialer{}
	}
	dialers.m[s] = d
}

// LookupDialer returns the Dialer registered for s. When there is none it
// returns an error wrapping ErrNoDialer that names the package to import.
func LookupDialer(s Scheme) (Dialer, error) {
	dialers.mu.RLock()
	d, ok := dialers.m[s]
	dialers.mu.RUnlock()
	if ok {
		return d, nil
	}
	if pkg, known := dialerPackages[s]; known {
		return Dialer{}, fmt.Errorf("%w %q in this program: add import _ %q", ErrNoDialer, s, pkg)
	}
	return Dialer{}, fmt.Errorf("%w %q", ErrNoDialer, s)
}
