// Package argv decodes Redis command syntax: an argument vector (the
// command name, then its arguments, as a RESP client sends them) becomes a
// protocol-neutral command.Request. The server's RESP path decodes every
// command with it, and the Go client's Do uses it to send arbitrary
// commands over SBE, so both sides agree on names, options, integer rules
// and error texts.
//
// Decoding is table-driven: the command and its arity come from the
// command table (package command); each command then has a small parser
// for its options here. A Decoder allocates nothing once its buffers have
// grown: the request's byte slices point into the arguments and an error
// text is kept in the Decoder.
package argv

import (
	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto/resp"
)

// Decoder turns argument vectors into requests. The zero value is ready;
// a Decoder is not safe for concurrent use.
type Decoder struct {
	// Status and Text say why the last Decode failed: the status an SBE
	// reply carries and the error text, worded as Redis 7 words it.
	Status command.Status
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
type parser func(d *Decoder, r *command.Request, args [][]byte) bool

// Decode fills r from one command's arguments (args[0] is the name, in any
// case). It reports whether the command is known and well formed; if not,
// d.Status and d.Text hold the error. r.Op is set as soon as the command
// is recognised, even when its arguments are then rejected, so callers can
// count the attempt. r's byte slices alias args.
func (d *Decoder) Decode(r *command.Request, args [][]byte) bool {
	r.Reset()
	d.Rejected = true
	if len(args) == 0 {
		return d.fail(command.Protocol, "ERR empty command")
	}
	op := command.ByName(args[0])
	if op == command.OpNone {
		d.Status = command.UnknownCommand
		d.Text = command.AppendUnknownCommand(d.Text[:0], args)
		return false
	}
	spec := command.Lookup(op)
	if len(args) >= 2 && len(command.Subcommands(op)) > 0 {
		sub := command.Subcommand(op, args[1])
		if sub == command.OpNone {
			r.Op = op
			d.Status = command.UnknownCommand
			d.Text = command.AppendUnknownSubcommand(d.Text[:0], args[1], spec.Name)
			return false
		}
		op, spec = sub, command.Lookup(sub)
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
var keyArg [command.NumOps]bool

func (d *Decoder) fail(st command.Status, text string) bool {
	d.Status = st
	d.Text = append(d.Text[:0], text...)
	return false
}

// failQuoting records an error whose text is prefix + arg + suffix.
func (d *Decoder) failQuoting(st command.Status, prefix string, arg []byte, suffix string) bool {
	d.Status = st
	d.Text = append(d.Text[:0], prefix...)
	d.Text = command.AppendSanitized(d.Text, arg, 128)
	d.Text = append(d.Text, suffix...)
	return false
}

func (d *Decoder) wrongArgs(name string) bool {
	d.Status = command.WrongArgs
	d.Text = command.AppendWrongArgs(d.Text[:0], name)
	return false
}

func (d *Decoder) syntax() bool { return d.fail(command.Syntax, "ERR syntax error") }

// integer reads an integer argument with Redis's string2ll rules
// (resp.ParseInt): no '+', no leading zeros, no spaces, within int64.
func (d *Decoder) integer(b []byte, dst *int64) bool {
	v, ok := resp.ParseInt(b)
	if !ok {
		return d.fail(command.NotInteger, "ERR value is not an integer or out of range")
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
		return d.fail(command.Err, msg)
	case !ok:
		return d.fail(command.NotInteger, "ERR value is not an integer or out of range")
	}
	return d.fail(command.OutOfRange, "ERR value is out of range, value must between -2147483648 and 2147483647")
}

// parsers holds each command's option parser; commands without one take
// nothing but what their arity already checked.
var parsers [command.NumOps]parser

func init() {
	for op, p := range map[command.Op]parser{
		command.OpPing: rest(1), command.OpEcho: value(1),
		command.OpSet: parseSet, command.OpDel: keys, command.OpExists: keys, command.OpMGet: keys,
		command.OpExpire: parseExpire, command.OpPExpire: parseExpire,
		command.OpIncrBy: keyInt, command.OpDecrBy: keyInt,
		command.OpMSet: parseMSet, command.OpFlushAll: parseFlush, command.OpFlushDB: parseFlush,
		command.OpInfo: rest(1), command.OpAuth: parseAuth, command.OpSelect: parseSelect,
		command.OpConfigGet: keyAndRest(2), command.OpClientSetName: value(2),
		command.OpClientSetInfo: parseSetInfo, command.OpCommandDocs: rest(2), command.OpCommandInfo: rest(2),
		command.OpCommandList: parseCommandList, command.OpCommandGetKeys: rest(2),
		command.OpCommandGetKeysAndFlags: rest(2), command.OpHello: parseHello,
		command.OpSetNX: keyValue, command.OpSetEX: parseSetEx, command.OpPSetEX: parseSetEx,
		command.OpGetSet: keyValue, command.OpGetEX: parseGetEx, command.OpAppend: keyValue,
		command.OpGetRange: parseRange, command.OpSubstr: parseRange, command.OpSetRange: parseSetRange,
		command.OpIncrByFloat: parseIncrByFloat, command.OpMSetNX: parseMSet, command.OpUnlink: keys,
		command.OpTouch: keys, command.OpRename: keyAndNewKey, command.OpRenameNX: keyAndNewKey,
		command.OpCopy: parseCopy, command.OpExpireAt: parseExpire, command.OpPExpireAt: parseExpire,
		command.OpKeys: value(1), command.OpScan: parseScan, command.OpObjectEncoding: keyAt2,
		command.OpObjectFreq: keyAt2, command.OpObjectIdleTime: keyAt2, command.OpObjectRefCount: keyAt2,
		command.OpMemoryUsage: parseMemoryUsage, command.OpRestore: parseRestore,
		command.OpSwapDB: parseSwapDB, command.OpMove: parseMove,
		command.OpSetBit: parseSetBit, command.OpGetBit: parseGetBit, command.OpBitCount: parseBitCount,
		command.OpBitPos: parseBitPos, command.OpBitOp: parseBitOp, command.OpBitField: parseBitField,
		command.OpBitFieldRO: parseBitField, command.OpLCS: parseLCS, command.OpWatch: keys,
		command.OpClientList: parseClientList, command.OpClientKill: parseClientKill,
		command.OpClientNoEvict: parseNoEvict, command.OpClientNoTouch: parseNoEvict,
		command.OpClientPause: parseClientPause, command.OpClientReply: parseClientReply,
		command.OpClientTracking: parseClientTracking, command.OpClientCaching: value(2),
		command.OpClientUnblock: parseClientUnblock, command.OpWait: parseWait,
		command.OpConfigSet: parseConfigSet, command.OpFunctionFlush: parseFlushFunction,
		command.OpFunctionList: parseFunctionList, command.OpBgSave: rest(1), command.OpShutdown: rest(1),
		// Replication, primary side.
		command.OpPSync: rest(1), command.OpReplConf: rest(1),
		// Replica side of replication.
		command.OpReplicaOf: rest(1), command.OpSlaveOf: rest(1),
		command.OpFailover: rest(1), command.OpDebug: rest(1),
	} {
		parsers[op] = p
	}
	for _, op := range []command.Op{command.OpACLCat, command.OpACLDelUser, command.OpACLDryRun,
		command.OpACLGenPass, command.OpACLGetUser, command.OpACLLog, command.OpACLSetUser, command.OpSlowLogGet} {
		parsers[op] = rest(2) // the engine reads the words after the subcommand's name
	}
	// Pub/Sub: channels and patterns in Args; PUBLISH's channel in Key (a
	// shard channel is routed as a key in cluster mode) and its message
	// in Value; PUBSUB's subcommands leave their words to the engine.
	for _, op := range []command.Op{command.OpSubscribe, command.OpUnsubscribe, command.OpPSubscribe,
		command.OpPUnsubscribe, command.OpPubSubChannels, command.OpPubSubNumSub,
		command.OpPubSubShardChannels, command.OpPubSubShardNumSub} {
		parsers[op] = rest(1)
		if command.Lookup(op).Container != command.OpNone {
			parsers[op] = rest(2)
		}
	}
	parsers[command.OpPublish], parsers[command.OpSPublish] = keyValue, keyValue
	parsers[command.OpSSubscribe], parsers[command.OpSUnsubscribe] = shardChannels, shardChannels
	// LATENCY: the words after the subcommand's name.
	for _, op := range []command.Op{command.OpLatencyGraph, command.OpLatencyHistogram, command.OpLatencyHistory, command.OpLatencyReset} {
		parsers[op] = rest(2)
	}
	// The collection commands: the key, then the rest for the engine to read.
	for op := command.OpHSet; op <= command.OpRPopLPush; op++ {
		if command.Lookup(op) != nil {
			parsers[op] = keys
		}
	}
	for _, op := range []command.Op{command.OpGet, command.OpTTL, command.OpPTTL, command.OpPersist,
		command.OpIncr, command.OpDecr, command.OpType, command.OpGetDel, command.OpStrLen,
		command.OpExpireTime, command.OpPExpireTime, command.OpDump} {
		keyArg[op] = true
	}
}

// The common shapes.

// shardChannels reads SSUBSCRIBE's and SUNSUBSCRIBE's shard channels: the
// first in Key (routed as a key in cluster mode), the rest in Args; Key is
// nil when there is none (SUNSUBSCRIBE of every shard channel).
func shardChannels(_ *Decoder, r *command.Request, args [][]byte) bool {
	if len(args) > 1 {
		r.Key, r.Args = args[1], args[2:]
	}
	return true
}

func keys(_ *Decoder, r *command.Request, args [][]byte) bool {
	r.Key, r.Args = args[1], args[2:]
	return true
}

func keyInt(d *Decoder, r *command.Request, args [][]byte) bool {
	r.Key = args[1]
	return d.integer(args[2], &r.Amount)
}

// rest puts args[i:] in Args.
func rest(i int) parser {
	return func(_ *Decoder, r *command.Request, args [][]byte) bool {
		r.Args = args[i:]
		return true
	}
}

// value puts args[i] in Value.
func value(i int) parser {
	return func(_ *Decoder, r *command.Request, args [][]byte) bool {
		r.Value = args[i]
		return true
	}
}

// keyAndRest puts args[i] in Key and the rest in Args.
func keyAndRest(i int) parser {
	return func(_ *Decoder, r *command.Request, args [][]byte) bool {
		r.Key, r.Args = args[i], args[i+1:]
		return true
	}
}

// parseSelect reads SELECT index.
func parseSelect(d *Decoder, r *command.Request, args [][]byte) bool {
	return d.int32(args[1], &r.Amount, "")
}

// The sorted-set commands, and the keynum commands of sets and lists: the
// key (or, for a keynum command, the first key after numkeys, whose count
// goes in Amount), then the rest for the engine to read.
func init() {
	for op := command.OpZAdd; op <= command.OpLMPop; op++ {
		if command.Lookup(op) != nil {
			parsers[op] = keys
		}
	}
	for _, op := range []command.Op{command.OpZUnion, command.OpZInter, command.OpZDiff, command.OpZInterCard} {
		parsers[op] = numkeysAt(1, false)
	}
	for _, op := range []command.Op{command.OpZUnionStore, command.OpZInterStore, command.OpZDiffStore} {
		parsers[op] = numkeysAt(2, false)
	}
	for _, op := range []command.Op{command.OpSInterCard, command.OpZMPop, command.OpLMPop} {
		parsers[op] = numkeysAt(1, true)
	}
	// The blocking pops: the keys, then the rest (the timeout last) for
	// the engine; BLMPOP's and BZMPOP's timeout in Value, before numkeys.
	for _, op := range []command.Op{command.OpBLPop, command.OpBRPop, command.OpBLMove,
		command.OpBRPopLPush, command.OpBZPopMin, command.OpBZPopMax} {
		parsers[op] = keys
	}
	parsers[command.OpBLMPop], parsers[command.OpBZMPop] = numkeysAt(2, true), numkeysAt(2, true)
}

// numkeysAt reads a keynum command whose numkeys is args[i], with the
// checks and texts of the command's Redis 7.0 handler: zunionInterDiff's
// (strict: false) or SINTERCARD's, ZMPOP's and LMPOP's (strict: true).
func numkeysAt(i int, strict bool) parser {
	return func(d *Decoder, r *command.Request, args [][]byte) bool {
		n, ok := resp.ParseInt(args[i])
		switch {
		case strict && (!ok || n < 1):
			return d.fail(command.Err, "ERR numkeys should be greater than 0")
		case !ok:
			return d.fail(command.NotInteger, "ERR value is not an integer or out of range")
		case n < 1:
			d.Status = command.Err
			d.Text = append(append(append(d.Text[:0], "ERR at least 1 input key is needed for '"...),
				command.Lookup(r.Op).Name...), "' command"...)
			return false
		}
		switch r.Op {
		case command.OpSInterCard:
			if n > int64(len(args)-2) {
				return d.fail(command.Err, "ERR Number of keys can't be greater than number of args")
			}
		case command.OpZMPop, command.OpLMPop, command.OpBLMPop, command.OpBZMPop:
			if n >= int64(len(args)-i-1) { // no argument left for MIN|MAX or LEFT|RIGHT
				return d.syntax()
			}
		default:
			if n > int64(len(args)-i-1) {
				return d.syntax()
			}
		}
		r.Amount = n
		switch {
		case i == 1:
			r.Key, r.Args = args[2], args[3:]
		case r.Op == command.OpBLMPop || r.Op == command.OpBZMPop: // timeout numkeys key...
			r.Value, r.Key, r.Args = args[1], args[3], args[4:]
		default:
			r.Key, r.Args = args[1], args[3:]
		}
		return true
	}
}

// SORT: the key, then the options for the engine to read; Amount is 1 +
// the index in Args of the STORE destination (0: none), so routing and
// ACL checks see the key SORT writes (command.SortKeys). SORT_RO has no
// STORE.
func init() {
	parsers[command.OpSort] = func(_ *Decoder, r *command.Request, args [][]byte) bool {
		r.Key, r.Args = args[1], args[2:]
		if i := command.SortKeys(args); i > 0 {
			r.Amount = int64(i - 1)
		}
		return true
	}
	parsers[command.OpSortRO] = keys
}
