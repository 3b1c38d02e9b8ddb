// Package replication holds what a Redis-compatible primary keeps to serve
// replicas by Redis's PSYNC2 protocol: the replication ids (the current one
// and the previous one, kept after a promotion so former siblings can still
// continue), master_repl_offset, and the backlog, a ring of the newest
// stream bytes from which a replica that lost its link for a while is sent
// only what it missed (+CONTINUE) instead of a whole snapshot.
//
// The package has no I/O and no goroutines: the engine's loop owns a State
// and feeds it every byte of the replication stream (Feed), asks it whether
// a PSYNC can continue (Continue) and copies the missed bytes out of the
// backlog (Backlog.From). A replica side uses the same State: it adopts its
// primary's id and offset after a full sync (Adopt) and feeds the stream it
// applies, so replicas chained below it can continue from it too.
//
// Offsets are Redis's: master_repl_offset counts every stream byte ever
// fed; the backlog holds the bytes [First, First+Len) where the newest byte
// is at offset master_repl_offset, so First is master_repl_offset+1 when
// the backlog is empty.
package replication
