// Package replica is goblin's side of Redis's replication protocol as a
// replica: the link to a primary (a redis-server, or a goblin primary)
// that performs the Redis 7.0 handshake, loads the primary's snapshot on a
// full resynchronisation, then applies its command stream, resuming with
// PSYNC after a link loss.
//
// # Threads
//
// A Link is a transport.Server the store loop polls, like a listener: the
// primary's bytes are applied on the loop goroutine, through the engine's
// master client, exactly where a client's requests would be. A goroutine
// per connection attempt (the run) does the blocking work the loop must
// never do: dialling, the handshake, receiving the snapshot and decoding
// it (rdb.Decoder). It hands the loop events (decoded keys in batches,
// link up and down) through a mutex-guarded inbox and an eventfd, and it
// waits when the inbox holds more than Options.MaxInbox bytes, so a loop
// that falls behind slows the primary's link down instead of growing
// memory. Once the snapshot is in, the run hands the socket to the loop,
// which reads the stream itself, nonblocking, when the Link's epoll set
// (WaitFD: the eventfd and the socket, nested in the loop's own) says it
// is readable: the stream's bytes make no goroutine hop. A second
// goroutine per run writes REPLCONF ACK every second and on the loop's
// request (after a REPLCONF GETACK in the stream); repl-timeout is checked
// by the run's read deadlines before the hand-over and by the loop after.
//
// # Full resynchronisation
//
// The snapshot is parsed off the loop; the loop applies the decoded keys
// in bounded slices (Options.LoadSlice keys per poll) into the flushed
// databases, answering its clients' other commands between slices
// (LOADING until the last key). Loading into a fresh keyspace and swapping
// it in was the alternative: it would keep serving the old data during the
// load, as Redis's disk-based load does, but needs twice the memory and
// a store built on another goroutine, which the store's owner check
// forbids. The slices keep one keyspace and one owner.
//
// # Offsets and ids
//
// The replication offset counts the stream bytes applied, byte for byte as
// Redis counts them: a command inside MULTI advances it only when its EXEC
// has run, and the ACK that answers REPLCONF GETACK excludes the GETACK's
// own bytes. After a link loss the next run sends PSYNC with the master's
// replication id and offset+1, so the primary can answer +CONTINUE.
// Unfollow (REPLICAOF NO ONE) shifts the ids as a promotion does (IDs):
// the primary side of replication takes them over when it is joined to
// this package.
package replica
