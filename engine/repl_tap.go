package engine

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
