package server

// The socket transports. Adding a transport is a Builder and a line in
// builders (build.go): parse the target's parameters, build the
// transport's server side with the handler or engine from env, return it.

import (
	"fmt"

	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/uds"
)

// buildSocket serves a uds:// or tcp:// target.
func buildSocket(t transport.Target, env *Env) (transport.Server, error) {
	cfg, err := uds.ConfigFor(t)
	if err != nil {
		return nil, err
	}
	o := env.Options
	name := cfg.Network
	if name == "unix" {
		name = "uds"
	}
	if t.Scheme == transport.TLS {
		name = "tls"
	}
	// A socket listener serves both protocols (each connection's first
	// bytes tell which); requests count under the protocol they came in.
	cfg.Handler = protoHandlers{
		proto.RESP: env.Handler(name + "/" + proto.RESP.String()),
		proto.SBE:  env.Handler(name + "/" + proto.SBE.String()),
	}
	cfg.MaxClients = o.MaxClients
	cfg.MaxOutput = o.MaxOutput
	cfg.StallTimeout = o.StallTimeout
	cfg.MaxInput = o.MaxInput
	cfg.PassOutput = o.PassOutput
	cfg.Budget = env.SocketBudget
	cfg.IdleTimeout = o.IdleTimeout
	if cfg.SocketMode == 0 {
		cfg.SocketMode = o.SocketMode
	}
	cfg.CheckEvery = o.SocketCheckEvery
	cfg.Logger = env.Logger
	cfg.Protected = env.Protected
	if t.Scheme == transport.TLS {
		if env.TLS == nil {
			return nil, fmt.Errorf("%w: %s needs the TLS settings (tls-cert-file, tls-key-file)", ErrOptions, t)
		}
		cfg.TLS = env.TLS
	}
	return uds.Listen(cfg)
}

// protoHandlers opens each socket client's session with the engine handler
// of the protocol it speaks.
type protoHandlers [2]EngineHandler

// OpenStream implements transport.StreamHandler.
func (h protoHandlers) OpenStream(p proto.Protocol) transport.StreamSession {
	return h[p].OpenStream(p)
}
