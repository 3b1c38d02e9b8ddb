// Package engine is goblin's command layer: the one place where what a
// command means is written down. An Engine decodes a request from RESP
// (proto/resp) or SBE (proto/sbe) into the same small, protocol-neutral
// Request value (operation, key, value, options, correlation id), executes
// it against the store, and encodes the reply in the request's protocol.
// RESP and SBE therefore cannot drift apart: they differ only in how bytes
// become a Request and how a reply becomes bytes.
//
// The Engine runs on the server's loop goroutine only, like the store it
// drives; it has no locks. Per-client state lives in a Session: the
// protocol, the ACL user the client authenticated as (package acl; the
// default user, whose password is Options.RequirePass, when it needs
// none), its CLIENT SETNAME name, and a pointer to the transport's Stats
// counters. Every command passes the user's permission check first: one
// predictable branch for a user allowed everything (acl.go). While the
// slow log is on (Options.SlowlogSlowerThan) every command is timed
// (slowlog.go).
//
// Stream transports (Unix and TCP sockets) call ServeStream with the bytes
// read so far: every complete request is executed in order and its reply
// appended; a partial request is left unconsumed until more bytes arrive.
// Message transports (the ring, Aeron) call ServeMessage with exactly one
// request. On a malformed request the engine writes a protocol error
// (RESP: "-ERR Protocol error: ..."; SBE: a Reply with StatusProtocol),
// executes nothing of that request, and asks for the connection to close.
//
// PING, GET and SET, in either protocol, decode, execute and encode
// without allocating (see the benchmarks and AllocsPerRun tests).
package engine
