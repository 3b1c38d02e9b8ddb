package engine

import "strconv"

// StreamTap receives the replication stream, byte for byte as the
// Redis-protocol replicas and the backlog get it, on the loop goroutine:
// the Aeron publication of the stream (package replication/aeronfeed) is
// one. id is the replication id the bytes belong to and offset
// master_repl_offset before them (b's first byte is at offset+1). b is
// only valid during the call. A tap must not block the loop.
type StreamTap interface {
	StreamFeed(id string, offset int64, b []byte)
}

// SetStreamTap installs t (nil removes it) and starts propagation if it
// had not started: from now on every write is fed to the backlog and to t,
// with or without a Redis-protocol replica. Loop goroutine, or before the
// loop runs.
func (e *Engine) SetStreamTap(t StreamTap) {
	e.repl.tap = t
	if t != nil && !e.repl.feed && !e.repl.upstream {
		e.enableFeed(true)
	}
}

// tapInfo is a StreamTap that adds lines to INFO replication (the Aeron
// publication: its channel and each Aeron replica's offset and lag).
type tapInfo interface {
	AppendInfo(dst []byte) []byte
}

func (e *Engine) appendTapInfo(w *infoWriter) {
	if t, ok := e.repl.tap.(tapInfo); ok {
		w.b = t.AppendInfo(w.b)
	}
}

// TapReplica is a replica a StreamTap knows of (an Aeron replica, from its
// status messages): INFO replication lists it as a slave<N> line beside
// the Redis-protocol replicas, so redis-sentinel discovers it and can
// promote it.
type TapReplica struct {
	IP     string
	Port   int   // its listening port
	Offset int64 // the stream offset it applied
	Lag    int64 // seconds since its last report
}

// tapReplicas is a StreamTap that knows its replicas.
type tapReplicas interface {
	TapReplicas(dst []TapReplica) []TapReplica
}

// tapReplicaList returns the tap's replicas that are not Redis-protocol
// replicas as well (an Aeron replica catching up over TCP is listed once,
// as the TCP replica it is then), into e.repl.tapReps.
func (e *Engine) tapReplicaList() []TapReplica {
	t, ok := e.repl.tap.(tapReplicas)
	if !ok {
		return nil
	}
	list := t.TapReplicas(e.repl.tapReps[:0])
	n := 0
outer:
	for _, tr := range list {
		if tr.Port <= 0 {
			continue // no listening port to reach it on
		}
		for _, rp := range e.repl.replicas {
			if rp.s.rconf.port == int64(tr.Port) && replicaIP(rp.s) == tr.IP {
				continue outer
			}
		}
		list[n] = tr
		n++
	}
	e.repl.tapReps = list[:n]
	return e.repl.tapReps
}

// appendTapReplicas appends a slave<N> line per tap replica, numbered on
// from first, as Redis lays a replica's line out (state online).
func appendTapReplicas(b []byte, first int, taps []TapReplica) []byte {
	for i, tr := range taps {
		b = append(b, "slave"...)
		b = strconv.AppendInt(b, int64(first+i), 10)
		b = append(b, ":ip="...)
		b = append(b, tr.IP...)
		b = append(b, ",port="...)
		b = strconv.AppendInt(b, int64(tr.Port), 10)
		b = append(b, ",state=online,offset="...)
		b = strconv.AppendInt(b, tr.Offset, 10)
		b = append(b, ",lag="...)
		b = strconv.AppendInt(b, tr.Lag, 10)
		b = append(b, '\r', '\n')
	}
	return b
}
