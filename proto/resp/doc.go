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
// A server reads each connection's stream with a Parser: given a buffer
// that ends inside a command, it remembers how far it got (the multibulk
// count, the complete arguments as offsets, where the search for the
// current line's end stopped) and resumes there when offered the same bytes
// and more, so a command that arrives in many pieces costs the same as one
// that arrives whole (Parser.Examined counts the work). The package-level
// ReadCommand remembers nothing and parses a partial command from its start
// on each call; it suits message transports, where a message holds a whole
// command.
package resp
