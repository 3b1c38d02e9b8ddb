package replica

// Handoff ends the link's connection to the primary without unfollowing
// it as REPLICAOF NO ONE would: the replication ids and offset stay as
// they are (no shift), the run stops and the stream bytes not yet applied
// are dropped (the master client's open MULTI too), so whoever takes the
// stream over resumes at exactly IDs().Offset+1. The link follows nothing
// afterwards; Resume starts it again. Loop goroutine.
//
// The Aeron source (package replica/aeronsource) uses it: the link catches
// the replica up over TCP, then hands the stream over to the Aeron
// subscription at its offset.
func (l *Link) Handoff() IDs {
	l.stopRun()
	l.following = false
	l.setLinkDown()
	l.state = StateNone
	return l.ids
}

// Resume follows host:port again from the history given (after a
// Handoff): the next PSYNC offers id and offset+1, so a primary whose
// backlog still holds them answers +CONTINUE. Loop goroutine.
func (l *Link) Resume(host string, port int, ids IDs) {
	l.stopRun()
	l.ids = ids
	l.following, l.host, l.port = true, host, port
	l.setLinkDown()
	l.startRun(0)
}

// Carried tells a handed-off link that the stream is applied elsewhere up
// to offset and last heard of at ioMillis (unix ms): the link reports
// itself up and connected at that offset (ROLE, INFO, Stats) while it
// follows nothing itself. Loop goroutine.
func (l *Link) Carried(offset, ioMillis int64) {
	l.ids.Offset = offset
	l.linkUp = true
	l.state = StateConnected
	l.lastIO.Store(ioMillis)
}
