package server

// The Aeron transport (transport/aeron), built like the ring in ring.go.

import (
	"fmt"

	"github.com/goblin-kv/goblin/store"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/aeron"
)

// buildAeron serves an aeron:ipc or aeron:udp target: one request per
// Aeron message, executed inline by the engine.
func buildAeron(t transport.Target, env *Env) (transport.Server, error) {
	o, err := aeron.ConfigFor(t)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	o.Handler = env.Handler("aeron-" + t.Address + "/" + t.Proto.String())
	o.Logger = env.Logger
	o.MaxRequest = env.Options.MaxInput // the same cap as a socket client's unfinished request
	// The same total as the socket clients', counted apart for each Aeron
	// listener.
	o.MaxClientMemory = env.Options.MaxClientMemory
	return aeron.Listen(o)
}

// The server-wide stats every Aeron listener's media driver shows as Aeron
// counters (one set per driver directory), so AeronStat and aeron-stat
// list goblin's own stats beside the driver's. Their type ids are goblin's,
// above the 0–999 Aeron reserves; docs/metrics.md lists them.
const AeronCounterBase = 4000

// The type ids of the server's Aeron counters, one per stat.
const (
	AeronCounterClients       = AeronCounterBase + iota // clients connected now, every listener
	AeronCounterAccepted                                // clients accepted
	AeronCounterRejected                                // clients refused
	AeronCounterDisconnects                             // clients gone, every reason
	AeronCounterSlowConsumers                           // clients dropped because their replies backed up
	AeronCounterRequests                                // requests executed
	AeronCounterErrors                                  // error replies
	AeronCounterBytesIn                                 // request bytes received
	AeronCounterBytesOut                                // reply bytes sent
	AeronCounterKeys                                    // keys in the store
	AeronCounterUsedMemory                              // bytes counted against maxmemory
)

// AeronCounters are the stats, in the order of the constants above, with
// the names their labels carry ("goblin requests: aeron:ipc stream=1001").
var AeronCounters = []aeron.StatCounter{
	{TypeID: AeronCounterClients, Name: "clients"},
	{TypeID: AeronCounterAccepted, Name: "accepted clients"},
	{TypeID: AeronCounterRejected, Name: "rejected clients"},
	{TypeID: AeronCounterDisconnects, Name: "disconnects"},
	{TypeID: AeronCounterSlowConsumers, Name: "slow consumers dropped"},
	{TypeID: AeronCounterRequests, Name: "requests"},
	{TypeID: AeronCounterErrors, Name: "errors"},
	{TypeID: AeronCounterBytesIn, Name: "received bytes"},
	{TypeID: AeronCounterBytesOut, Name: "sent bytes"},
	{TypeID: AeronCounterKeys, Name: "keys"},
	{TypeID: AeronCounterUsedMemory, Name: "used memory bytes"},
}

// aeronCounterSource asks the first Aeron listener of each driver
// directory to export AeronCounters and fills them at every metrics
// publish (Options.MetricsInterval, on the loop), never on the request
// path: the values are sums of the loop-owned counters /metrics exports.
func (s *Server) aeronCounterSource(m *Metrics) {
	var out []*aeron.Server
	dirs := map[string]bool{}
	for _, t := range s.transports {
		a, ok := t.(*aeron.Server)
		if !ok || dirs[a.Dir()] {
			continue
		}
		dirs[a.Dir()] = true
		if err := a.ExportCounters(AeronCounters); err != nil {
			panic(err) // AeronCounters has an id Aeron reserves
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return
	}
	values := make([]int64, len(AeronCounters))
	set := func(typeID int, v int64) { values[typeID-AeronCounterBase] = v }
	var ls transport.Stats
	var st store.Stats
	m.Source(func() {
		ls = transport.Stats{}
		for _, t := range s.transports {
			t.UpdateStats(&ls)
		}
		var requests, errs uint64
		for _, ss := range s.streams {
			for _, n := range ss.stats.Commands {
				requests += n
			}
			errs += ss.stats.Errors
		}
		var gone int64
		for _, n := range ls.Disconnects {
			gone += n
		}
		s.store.Stats(&st)
		set(AeronCounterClients, ls.Clients)
		set(AeronCounterAccepted, ls.Connects)
		set(AeronCounterRejected, ls.Rejected)
		set(AeronCounterDisconnects, gone)
		set(AeronCounterSlowConsumers, ls.Disconnects[transport.SlowConsumer])
		set(AeronCounterRequests, int64(requests))
		set(AeronCounterErrors, int64(errs))
		set(AeronCounterBytesIn, ls.BytesIn)
		set(AeronCounterBytesOut, ls.BytesOut)
		set(AeronCounterKeys, st.Keys)
		set(AeronCounterUsedMemory, st.UsedMemory)
		for _, a := range out {
			a.SetCounters(values)
		}
	})
}
