// Package argv decodes Redis command syntax: an argument vector (the
// command name, then its arguments, as a RESP client sends them) becomes a
// protocol-neutral request.Request. The server's RESP path decodes every
// command with it, and the Go client's Do uses it to send arbitrary
// commands over SBE, so both sides agree on names, options, integer rules
// and error texts.
//
// Decoding is table-driven: the command and its arity come from the
// command table (package request); each command then has a small parser
// for its options here. A Decoder allocates nothing once its buffers have
// grown: the request's byte slices point into the arguments and an error
// text is kept in the Decoder.
package argv

import (
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/reply"
	"github.com/goblin-kv/goblin/request"
)

// Decoder turns argument vectors into requests. The zero value is ready;
// a Decoder is not safe for concurrent use.
type Decoder struct {
	// Status and Text say why the last Decode failed: the status an SBE
	// reply carries and the error text, worded as Redis 7 words it.
	Status reply.Status
	Text   []byte
	// Rejected is set when the last Decode failed before the command's
	// own arguments were read: an unknown command or subcommand, or a
	// wrong number of arguments. Inside MULTI, Redis refuses such a command
	// at once (and aborts the transaction at EXEC) but queues one whose
	// arguments are wrong, whose error EXEC then returns.
	Rejected bool

	recs    []byte   // BITFIELD's operation records
	recArgs [][]byte // and the Args slices of them
}

// parser fills r from args once the command is known and its arity
// checked (r.Op is set, the rest of r is zero).
type parser func(d *Decoder, r *request.Request, args [][]byte) bool

// Decode fills r from one command's arguments (args[0] is the name, in any
// case). It reports whether the command is known and well formed; if not,
// d.Status and d.Text hold the error. r.Op is set as soon as the command
// is recognised, even when its arguments are then rejected, so callers can
// count the attempt. r's byte slices alias args.
func (d *Decoder) Decode(r *request.Request, args [][]byte) bool {
	r.Reset()
	d.Rejected = true
	if len(args) == 0 {
		return d.fail(reply.Protocol, "ERR empty command")
	}
	op := request.ByName(args[0])
	if op == request.OpNone {
		d.Status = reply.UnknownCommand
		d.Text = reply.AppendUnknownCommand(d.Text[:0], args)
		return false
	}
	spec := request.Lookup(op)
	if len(args) >= 2 && len(request.Subcommands(op)) > 0 {
		sub := request.Subcommand(op, args[1])
		if sub == request.OpNone {
			r.Op = op
			d.Status = reply.UnknownCommand
			d.Text = reply.AppendUnknownSubcommand(d.Text[:0], args[1], spec.Name)
			return false
		}
		op, spec = sub, request.Lookup(sub)
	}
	r.Op = op
	if n := spec.Arity; (n > 0 && len(args) != n) || (n < 0 && len(args) < -n) || spec.Dispatch {
		return d.wrongArgs(spec.Name)
	}
	d.Rejected = false
	if keyArg[op] { // GET, INCR...: the commonest shape, without a call
		r.Key = args[1]
		return true
	}
	if p := parsers[op]; p != nil {
		return p(d, r, args)
	}
	return true
}

// keyArg marks the commands whose one argument is their key.
var keyArg [request.NumOps]bool

func (d *Decoder) fail(st reply.Status, text string) bool {
	d.Status = st
	d.Text = append(d.Text[:0], text...)
	return false
}

// failQuoting records an error whose text is prefix + arg + suffix.
func (d *Decoder) failQuoting(st reply.Status, prefix string, arg []byte, suffix string) bool {
	d.Status = st
	d.Text = append(d.Text[:0], prefix...)
	d.Text = reply.AppendSanitized(d.Text, arg, 128)
	d.Text = append(d.Text, suffix...)
	return false
}

func (d *Decoder) wrongArgs(name string) bool {
	d.Status = reply.WrongArgs
	d.Text = reply.AppendWrongArgs(d.Text[:0], name)
	return false
}

func (d *Decoder) syntax() bool { return d.fail(reply.Syntax, "ERR syntax error") }

// integer reads an integer argument with Redis's string2ll rules
// (resp.ParseInt): no '+', no leading zeros, no spaces, within int64.
func (d *Decoder) integer(b []byte, dst *int64) bool {
	v, ok := resp.ParseInt(b)
	if !ok {
		return d.fail(reply.NotInteger, "ERR value is not an integer or out of range")
	}
	*dst = v
	return true
}

// int32 reads an argument Redis reads with getIntFromObjectOrReply: an
// integer, then within 32 bits; msg replaces both error texts when given.
func (d *Decoder) int32(b []byte, dst *int64, msg string) bool {
	v, ok := resp.ParseInt(b)
	switch {
	case ok && v >= -1<<31 && v < 1<<31:
		*dst = v
		return true
	case msg != "":
		return d.fail(reply.Err, msg)
	case !ok:
		return d.fail(reply.NotInteger, "ERR value is not an integer or out of range")
	}
	return d.fail(reply.OutOfRange, "ERR value is out of range, value must between -2147483648 and 2147483647")
}

// parsers holds each command's option parser; commands without one take
// nothing but what their arity already checked.
var parsers [request.NumOps]parser

func init() {
	for op, p := range map[request.Op]parser{
		request.OpPing: rest(1), request.OpEcho: value(1),
		request.OpSet: parseSet, request.OpDel: keys, request.OpExists: keys, request.OpMGet: keys,
		request.OpExpire: parseExpire, request.OpPExpire: parseExpire,
		request.OpIncrBy: keyInt, request.OpDecrBy: keyInt,
		request.OpMSet: parseMSet, request.OpFlushAll: parseFlush, request.OpFlushDB: parseFlush,
		request.OpInfo: rest(1), request.OpAuth: parseAuth, request.OpSelect: parseSelect,
		request.OpConfigGet: keyAndRest(2), request.OpClientSetName: value(2),
		request.OpClientSetInfo: parseSetInfo, request.OpCommandDocs: rest(2), request.OpCommandInfo: rest(2),
		request.OpCommandList: parseCommandList, request.OpCommandGetKeys: rest(2),
		request.OpCommandGetKeysAndFlags: rest(2), request.OpHello: parseHello,
		request.OpSetNX: keyValue, request.OpSetEX: parseSetEx, request.OpPSetEX: parseSetEx,
		request.OpGetSet: keyValue, request.OpGetEX: parseGetEx, request.OpAppend: keyValue,
		request.OpGetRange: parseRange, request.OpSubstr: parseRange, request.OpSetRange: parseSetRange,
		request.OpIncrByFloat: parseIncrByFloat, request.OpMSetNX: parseMSet, request.OpUnlink: keys,
		request.OpTouch: keys, request.OpRename: keyAndNewKey, request.OpRenameNX: keyAndNewKey,
		request.OpCopy: parseCopy, request.OpExpireAt: parseExpire, request.OpPExpireAt: parseExpire,
		request.OpKeys: value(1), request.OpScan: parseScan, request.OpObjectEncoding: keyAt2,
		request.OpObjectFreq: keyAt2, request.OpObjectIdleTime: keyAt2, request.OpObjectRefCount: keyAt2,
		request.OpMemoryUsage: parseMemoryUsage, request.OpRestore: parseRestore,
		request.OpSwapDB: parseSwapDB, request.OpMove: parseMove,
		request.OpSetBit: parseSetBit, request.OpGetBit: parseGetBit, request.OpBitCount: parseBitCount,
		request.OpBitPos: parseBitPos, request.OpBitOp: parseBitOp, request.OpBitField: parseBitField,
		request.OpBitFieldRO: parseBitField, request.OpLCS: parseLCS, request.OpWatch: keys,
		request.OpClientList: parseClientList, request.OpClientKill: parseClientKill,
		request.OpClientNoEvict: parseNoEvict, request.OpClientNoTouch: parseNoEvict,
		request.OpClientPause: parseClientPause, request.OpClientReply: parseClientReply,
		request.OpClientTracking: parseClientTracking, request.OpClientCaching: value(2),
		request.OpClientUnblock: parseClientUnblock, request.OpWait: parseWait,
		request.OpConfigSet: parseConfigSet, request.OpFunctionFlush: parseFlushFunction,
		request.OpFunctionList: parseFunctionList,
	} {
		parsers[op] = p
	}
	for _, op := range []request.Op{request.OpGet, request.OpTTL, request.OpPTTL, request.OpPersist,
		request.OpIncr, request.OpDecr, request.OpType, request.OpGetDel, request.OpStrLen,
		request.OpExpireTime, request.OpPExpireTime, request.OpDump} {
		keyArg[op] = true
	}
}

// The common shapes.

func keys(_ *Decoder, r *request.Request, args [][]byte) bool {
	r.Key, r.Args = args[1], args[2:]
	return true
}

func keyInt(d *Decoder, r *request.Request, args [][]byte) bool {
	r.Key = args[1]
	return d.integer(args[2], &r.Amount)
}

// rest puts args[i:] in Args.
func rest(i int) parser {
	return func(_ *Decoder, r *request.Request, args [][]byte) bool {
		r.Args = args[i:]
		return true
	}
}

// value puts args[i] in Value.
func value(i int) parser {
	return func(_ *Decoder, r *request.Request, args [][]byte) bool {
		r.Value = args[i]
		return true
	}
}

// keyAndRest puts args[i] in Key and the rest in Args.
func keyAndRest(i int) parser {
	return func(_ *Decoder, r *request.Request, args [][]byte) bool {
		r.Key, r.Args = args[i], args[i+1:]
		return true
	}
}

// parseSelect reads SELECT index.
func parseSelect(d *Decoder, r *request.Request, args [][]byte) bool {
	return d.int32(args[1], &r.Amount, "")
}
