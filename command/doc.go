// Package command is goblin's protocol-neutral vocabulary for a command:
// the Request value every wire decoder produces (RESP through proto/argv, SBE through
// proto/sbe, the Go client's typed calls directly) and the command engine
// executes, and the command table that says what each operation is: its
// Redis name, arity, flags, key positions and help.
//
// The table is the one list of the commands goblin answers. The RESP
// decoder finds commands and checks their arity in it; the engine answers
// COMMAND, COMMAND INFO, COUNT, DOCS, LIST and GETKEYS from it; the CLI's
// help and completion and the server's per-command metrics read it; and
// its key specs (Redis 7's begin-search/find-keys form, and the legacy
// first-key, last-key, step triple derived from them as Redis derives it)
// locate a command's keys in a Redis argument vector, as cluster clients
// and the CROSSSLOT check need.
//
// The package imports nothing of goblin's, so both sides of every protocol
// can depend on it.
//
// The answer to a command is a Reply: what the engine (package engine)
// produces and what every wire encoder (RESP2, RESP3, SBE) turns into bytes. It holds no codec: proto/resp and proto/sbe encode a
// Reply, and the client library decodes wire bytes back into one.
//
// A reply is a root (Kind, Status, Integer, Value) and, when the root is an
// aggregate (array, map or set), its elements in Items, flattened in
// pre-order: an aggregate item's Integer is its element count (pairs for a
// map) and its elements follow it. So
//
//	*2 [ "a", [ 1, 2 ] ]
//
// is Kind Array with Items {Bulk "a"}, {Array 2}, {Integer 1}, {Integer 2}.
// Nothing in a Reply is a pointer into other replies, so the engine builds
// one in reused buffers without allocating.
//
// The kinds are RESP3's. A RESP2 encoder writes each as Redis does for a
// RESP2 client: a map as an array of 2n elements, a set as an array, a
// double as a bulk string, a boolean as the integer 1 or 0, a verbatim
// string as a bulk string without its "txt:" format, Nil as the null bulk
// string and NilArray as the null array.
package command
