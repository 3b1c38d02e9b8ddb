// Package resp is goblin's codec for RESP2, the Redis serialization
// protocol, so redis-cli, redis-benchmark and every Redis client library can
// talk to goblin.
//
// # Server side
//
// ReadCommand parses one command (multi-bulk or inline, as redis-cli and
// redis-benchmark's PING_INLINE send) from the front of a byte buffer, in
// place: the arguments it returns are sub-slices of the buffer, appended to a
// caller-owned slice, so a connection that reuses its args slice parses
// without allocating. A partial frame returns n == 0 and no error ("need
// more bytes"); nothing is consumed and the caller calls again when more
// bytes have arrived. Limits caps bulk length, argument count and inline
// line length; a frame that breaks a limit or the grammar returns an error
// that wraps ErrProtocol and whose text is Redis's own
// ("Protocol error: invalid bulk length"), ready for AppendError.
//
// The Append* functions (AppendSimpleString, AppendError, AppendBulk,
// AppendInt, AppendArray, AppendNull, ...) encode replies in the
// strconv.Append* shape: they append to a caller-owned buffer and return the
// extended slice.
//
// # Client side
//
// AppendCommand and AppendCommandString encode a command as a multi-bulk
// request. ReadReply parses one reply element (an array's elements follow as
// further elements); ReplySize reports the length of one complete reply,
// nested arrays included, or 0 when more bytes are needed. Both work in
// place and allocate nothing.
//
// ReadCommand re-parses a partial frame from its start on each call; bulk
// payloads are skipped by length, not scanned, so the cost of a retry is
// proportional to the number of arguments, not to the bytes buffered.
package resp
