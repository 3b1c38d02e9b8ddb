package server

// The shared-memory ring transport (transport/ring), registered like the
// socket transports in transports.go. Kept in its own file, written by the
// ring transport's owner, so it touches nothing else here.

import (
	"fmt"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/target"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/ring"
)

func init() { Register(target.Ring, buildRing) }

// buildRing serves a ring:// target: one request message per record, each
// executed inline by the engine through ServeMessage.
func buildRing(t target.Target, env *Env) (transport.Server, error) {
	o, err := ring.ConfigFor(t)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOptions, err)
	}
	eh, ok := env.Stream("ring/" + t.Proto.String()).(engineHandler)
	if !ok {
		return nil, fmt.Errorf("%w: ring transport needs the command engine", ErrOptions)
	}
	o.Handler = ringHandler{eh}
	return ring.Listen(o)
}

// ringHandler adapts the command engine to ring.Handler.
type ringHandler struct{ h engineHandler }

func (r ringHandler) OpenMessage(p proto.Protocol) ring.Session {
	return &ringSession{e: r.h.e, s: command.NewSession(p, r.h.st)}
}

type ringSession struct {
	e *command.Engine
	s *command.Session
}

func (s *ringSession) ServeMessage(msg, out []byte) ([]byte, bool) {
	return s.e.ServeMessage(s.s, msg, out)
}

func (s *ringSession) Close() {}
