package server

// The Aeron transport (transport/aeron), registered like the ring in
// ring.go. Kept in its own file, written by the Aeron transport's owner.

import (
	"fmt"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/target"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/aeron"
)

func init() { Register(target.Aeron, buildAeron) }

// buildAeron serves an aeron:ipc or aeron:udp target: one request per
// Aeron message, executed inline by the engine through ServeMessage.
func buildAeron(t target.Target, env *Env) (transport.Server, error) {
	o, err := aeron.ConfigFor(t)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOptions, err)
	}
	eh, ok := env.Stream("aeron-" + t.Address + "/" + t.Proto.String()).(engineHandler)
	if !ok {
		return nil, fmt.Errorf("%w: aeron transport needs the command engine", ErrOptions)
	}
	o.Handler = aeronHandler{eh}
	o.Logger = env.Logger
	return aeron.Listen(o)
}

// aeronHandler adapts the command engine to aeron.Handler.
type aeronHandler struct{ h engineHandler }

func (a aeronHandler) OpenMessage(p proto.Protocol) aeron.Session {
	return &aeronSession{e: a.h.e, s: command.NewSession(p, a.h.st)}
}

type aeronSession struct {
	e *command.Engine
	s *command.Session
}

func (s *aeronSession) ServeMessage(msg, out []byte) ([]byte, bool) {
	return s.e.ServeMessage(s.s, msg, out)
}

func (s *aeronSession) Close() {}
