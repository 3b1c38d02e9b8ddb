package aeronfeed

import (
	"time"

	"github.com/goblin-kv/goblin/engine"
)

// TapReplicas implements the engine's tap of replicas: the Aeron replicas
// with a recent status (and a listening port) become slave<N> lines of
// INFO replication, so redis-sentinel discovers them as it does
// Redis-protocol replicas, and can promote one. Loop goroutine.
func (p *Publisher) TapReplicas(dst []engine.TapReplica) []engine.TapReplica {
	if p.standby {
		return dst
	}
	for _, r := range p.replicas {
		dst = append(dst, engine.TapReplica{IP: r.IP, Port: r.Port, Offset: r.Offset,
			Lag: max(p.now-r.LastSeen, 0) / int64(time.Second)})
	}
	return dst
}
