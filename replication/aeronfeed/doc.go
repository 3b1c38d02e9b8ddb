// Package aeronfeed publishes a primary's replication stream once on an
// Aeron channel — UDP multicast, or multi-destination cast where the
// network has no multicast — so any number of replicas receive it at the
// cost of one send (docs/replication-aeron.md). It also holds the framing
// both sides share and a private media driver each goblin process runs for
// it.
//
// # Framing
//
// Each Aeron message is one frame: a fixed header then a slice of the
// stream (Frame). The header carries the replication id the bytes belong
// to and the stream offset before them (master_repl_offset, Redis's
// count), so a replica knows exactly which bytes a frame holds: it skips
// what it has, applies what follows on, and sees a gap — bytes the
// primary dropped while back-pressured, or a subscription that joined
// late — as a frame that starts past its offset. The payload is the
// Redis-protocol stream, cut at any byte: the replica's parser resumes
// across frames. A heartbeat is a frame with no payload, sent when the
// stream is quiet, so a replica learns the primary's offset and notices a
// stream that stopped reaching it.
//
// # The loop never waits
//
// Publisher.StreamFeed (the engine's StreamTap) only appends to a pending
// buffer; Publisher.Poll, a transport the store loop polls, offers what is
// pending and stops at the first back-pressured offer, to try again on the
// next cycle. When the pending bytes pass Options.MaxPending (the
// publication cannot keep up: with fc=min a slow replica holds it back)
// they are dropped and counted: the replicas see a gap and resynchronise
// over TCP, and the primary goes on at full speed.
//
// # Forwarded writes
//
// A replica may forward its clients' writes over Aeron (forwarded.go): a
// request on the primary's status channel (stream id + 2), run once by the
// primary's Inbox however often it is sent, answered by a KindAnswer frame
// on the replication stream, queued after the write's own bytes. The
// publication's replicas are also the engine's tap replicas
// (tapreplicas.go): slave<N> lines of INFO replication, for Sentinel.
package aeronfeed
