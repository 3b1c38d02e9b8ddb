// Package parse turns a Redis-style argument list (the command name, then
// its arguments, as a RESP client sends them) into goblin's
// protocol-neutral request, sbe.Request. It is the one copy of goblin's
// command syntax: the server's RESP path (package command) decodes every
// RESP command with Decode, and the Go client (package client) translates
// the same argument lists to SBE messages with it, so both sides agree on
// command names, options, integer rules and error texts.
//
// Decode allocates nothing: the request's byte slices point into args, and
// an error text is appended to the caller's Failure buffer. The package
// imports only proto/resp and proto/sbe.
package parse

import (
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/proto/sbe"
)

// The operations only RESP clients send, numbered from 100 and never put on
// the SBE wire. The other operations are the schema's (sbe.Op).
const (
	OpCommand       sbe.Op = 100 // COMMAND
	OpCommandDocs   sbe.Op = 101 // COMMAND DOCS
	OpCommandCount  sbe.Op = 102 // COMMAND COUNT
	OpHello         sbe.Op = 103 // HELLO
	OpClientSetInfo sbe.Op = 104 // CLIENT SETINFO
	// NumOps bounds every Op value goblin knows.
	NumOps = 128
)

// RESPOnly reports whether op has no SBE encoding.
func RESPOnly(op sbe.Op) bool { return op >= OpCommand }

var opNames = [NumOps]string{
	sbe.OpPing: "ping", sbe.OpEcho: "echo", sbe.OpGet: "get", sbe.OpSet: "set", sbe.OpDel: "del",
	sbe.OpExists: "exists", sbe.OpExpire: "expire", sbe.OpPExpire: "pexpire", sbe.OpTTL: "ttl",
	sbe.OpPTTL: "pttl", sbe.OpPersist: "persist", sbe.OpIncr: "incr", sbe.OpIncrBy: "incrby",
	sbe.OpDecr: "decr", sbe.OpDecrBy: "decrby", sbe.OpMGet: "mget", sbe.OpMSet: "mset",
	sbe.OpType: "type", sbe.OpDBSize: "dbsize", sbe.OpFlushAll: "flushall", sbe.OpFlushDB: "flushdb",
	sbe.OpInfo: "info", sbe.OpAuth: "auth", sbe.OpSelect: "select", sbe.OpQuit: "quit",
	sbe.OpConfigGet: "config|get", sbe.OpClientSetName: "client|setname",
	sbe.OpClientGetName: "client|getname", OpCommand: "command", OpCommandDocs: "command|docs",
	OpCommandCount: "command|count", OpHello: "hello", OpClientSetInfo: "client|setinfo",
}

// OpName returns the command's Redis name in lower case ("get",
// "client|setname"), or "" for an unknown Op.
func OpName(op sbe.Op) string {
	if int(op) < len(opNames) {
		return opNames[op]
	}
	return ""
}

// Failure says why Decode rejected a command: the status an SBE reply
// would carry and the error reply's text, worded as Redis 7 words it.
// Decode appends the text to Text[:0], so a Failure kept and reused
// between calls costs no allocation once its buffer has grown.
type Failure struct {
	Status sbe.Status
	Text   []byte
}

func (f *Failure) set(st sbe.Status, prefix string, arg []byte, suffix string) bool {
	f.Status = st
	f.Text = append(f.Text[:0], prefix...)
	f.Text = AppendSanitized(f.Text, arg, 128)
	f.Text = append(f.Text, suffix...)
	return false
}

func (f *Failure) wrongArgs(op sbe.Op) bool { return f.wrongArgsName(OpName(op)) }

func (f *Failure) wrongArgsName(name string) bool {
	f.Status = sbe.StatusWrongArgs
	f.Text = AppendWrongArgs(f.Text[:0], name)
	return false
}

// AppendWrongArgs appends Redis's "wrong number of arguments" text for the
// command name.
func AppendWrongArgs(b []byte, name string) []byte {
	b = append(b, "ERR wrong number of arguments for '"...)
	b = append(b, name...)
	return append(b, "' command"...)
}

func (f *Failure) unknownSubcommand(sub []byte, cmd string) bool {
	f.Status = sbe.StatusUnknownCommand
	b := append(f.Text[:0], "ERR unknown subcommand '"...)
	b = AppendSanitized(b, sub, 128)
	b = append(b, "'. Try "...)
	b = append(b, cmd...)
	f.Text = append(b, " HELP."...)
	return false
}

// unknownCommand writes Redis 7's text: ERR unknown command 'foo', with
// args beginning with: 'a' 'b' (each argument quoted and followed by a
// space, arguments added while the list is shorter than 128 bytes, each
// cut to what is left of the 128).
func (f *Failure) unknownCommand(args [][]byte) bool {
	f.Status = sbe.StatusUnknownCommand
	b := append(f.Text[:0], "ERR unknown command '"...)
	b = AppendSanitized(b, args[0], 128)
	b = append(b, "', with args beginning with: "...)
	start := len(b)
	for _, a := range args[1:] {
		used := len(b) - start
		if used >= 128 {
			break
		}
		b = append(b, '\'')
		b = AppendSanitized(b, a, 128-used)
		b = append(b, "' "...)
	}
	f.Text = b
	return false
}

// AppendSanitized appends at most max bytes of s with CR and LF replaced by
// spaces, as Redis does for error texts.
func AppendSanitized(b, s []byte, max int) []byte {
	if len(s) > max {
		s = s[:max]
	}
	for _, c := range s {
		if c == '\r' || c == '\n' {
			c = ' '
		}
		b = append(b, c)
	}
	return b
}

// EqualFold reports whether b equals the lower-case ASCII word s, ignoring
// case.
func EqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// ExpireFlagsError returns the error text for the EXPIRE option
// combinations Redis 7 rejects, or "" when f is acceptable.
func ExpireFlagsError(f sbe.Flags) string {
	if f&sbe.FlagNX != 0 && f&(sbe.FlagXX|sbe.FlagGT|sbe.FlagLT) != 0 {
		return "ERR NX and XX, GT or LT options at the same time are not compatible"
	}
	if f&sbe.FlagGT != 0 && f&sbe.FlagLT != 0 {
		return "ERR GT and LT options at the same time are not compatible"
	}
	return ""
}

// lowerName copies an ASCII command name into dst in lower case. It
// returns false for names longer than dst, which no known command is.
func lowerName(dst *[16]byte, name []byte) (int, bool) {
	if len(name) > len(dst) {
		return 0, false
	}
	for i, c := range name {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst[i] = c
	}
	return len(name), true
}

// Decode fills r from one command's arguments (args[0] is the command
// name, in any case) as the server reads them over RESP. It reports
// whether the command is known and well formed; if not, f holds the error
// reply. r.Op is set as soon as the command is recognised, even when its
// arguments are then rejected, so callers can count the attempt. r's byte
// slices (Key, Value, Args) alias args. For the RESP-only commands: HELLO's
// protocol version is in Amount (-1 when given but below 1), its AUTH user
// and password in Key and Value and its SETNAME name in Args; CLIENT
// SETINFO's attribute and value in Key and Value.
func Decode(r *sbe.Request, args [][]byte, f *Failure) bool {
	*r = sbe.Request{}
	if len(args) == 0 {
		return f.set(sbe.StatusProtocol, "ERR empty command", nil, "")
	}
	var low [16]byte
	n, ok := lowerName(&low, args[0])
	if !ok {
		return f.unknownCommand(args)
	}
	argc := len(args)
	switch string(low[:n]) {
	case "get":
		r.Op = sbe.OpGet
		if !arity(f, r.Op, argc, 2) {
			return false
		}
		r.Key = args[1]
	case "set":
		r.Op = sbe.OpSet
		if !arity(f, r.Op, argc, -3) {
			return false
		}
		r.Key, r.Value = args[1], args[2]
		return setOptions(f, args[3:], r)
	case "ping":
		r.Op = sbe.OpPing
		if argc > 2 {
			return f.wrongArgs(r.Op)
		}
		r.Args = args[1:]
	case "echo":
		r.Op = sbe.OpEcho
		if !arity(f, r.Op, argc, 2) {
			return false
		}
		r.Value = args[1]
	case "del", "exists", "mget":
		r.Op = map3(low[0], sbe.OpDel, sbe.OpExists, sbe.OpMGet)
		if !arity(f, r.Op, argc, -2) {
			return false
		}
		r.Key, r.Args = args[1], args[2:]
	case "mset":
		r.Op = sbe.OpMSet
		if argc < 3 || argc%2 == 0 {
			return f.wrongArgs(r.Op)
		}
		r.Key, r.Value, r.Args = args[1], args[2], args[3:]
	case "expire", "pexpire":
		r.Op = sbe.OpExpire
		if low[0] == 'p' {
			r.Op = sbe.OpPExpire
		}
		if !arity(f, r.Op, argc, -3) {
			return false
		}
		r.Key = args[1]
		// Like Redis, the options are checked before the time.
		for _, o := range args[3:] {
			switch {
			case EqualFold(o, "nx"):
				r.Flags |= sbe.FlagNX
			case EqualFold(o, "xx"):
				r.Flags |= sbe.FlagXX
			case EqualFold(o, "gt"):
				r.Flags |= sbe.FlagGT
			case EqualFold(o, "lt"):
				r.Flags |= sbe.FlagLT
			default:
				return f.set(sbe.StatusSyntax, "ERR Unsupported option ", o, "")
			}
		}
		if text := ExpireFlagsError(r.Flags); text != "" {
			return f.set(sbe.StatusSyntax, text, nil, "")
		}
		return intArg(f, args[2], &r.Amount)
	case "ttl", "pttl", "persist", "incr", "decr", "type":
		switch string(low[:n]) {
		case "ttl":
			r.Op = sbe.OpTTL
		case "pttl":
			r.Op = sbe.OpPTTL
		case "persist":
			r.Op = sbe.OpPersist
		case "incr":
			r.Op = sbe.OpIncr
		case "decr":
			r.Op = sbe.OpDecr
		default:
			r.Op = sbe.OpType
		}
		if !arity(f, r.Op, argc, 2) {
			return false
		}
		r.Key = args[1]
	case "incrby", "decrby":
		r.Op = sbe.OpIncrBy
		if low[0] == 'd' {
			r.Op = sbe.OpDecrBy
		}
		if !arity(f, r.Op, argc, 3) {
			return false
		}
		r.Key = args[1]
		return intArg(f, args[2], &r.Amount)
	case "dbsize":
		r.Op = sbe.OpDBSize
		return arity(f, r.Op, argc, 1)
	case "flushall", "flushdb":
		r.Op = sbe.OpFlushAll
		if n == 7 {
			r.Op = sbe.OpFlushDB
		}
		if argc > 2 || (argc == 2 && !EqualFold(args[1], "async") && !EqualFold(args[1], "sync")) {
			return f.set(sbe.StatusSyntax, "ERR syntax error", nil, "")
		}
	case "info":
		r.Op = sbe.OpInfo
		r.Args = args[1:]
	case "auth":
		r.Op = sbe.OpAuth
		switch argc {
		case 2:
			r.Value = args[1]
		case 3:
			r.Key, r.Value = args[1], args[2]
		default:
			return f.set(sbe.StatusSyntax, "ERR syntax error", nil, "")
		}
	case "select":
		r.Op = sbe.OpSelect
		if !arity(f, r.Op, argc, 2) {
			return false
		}
		return intArg(f, args[1], &r.Amount)
	case "quit":
		r.Op = sbe.OpQuit
	case "config":
		if argc < 2 {
			return f.wrongArgsName("config")
		}
		if !EqualFold(args[1], "get") {
			return f.unknownSubcommand(args[1], "CONFIG")
		}
		r.Op = sbe.OpConfigGet
		if argc < 3 {
			return f.wrongArgs(r.Op)
		}
		r.Key, r.Args = args[2], args[3:]
	case "client":
		if argc < 2 {
			return f.wrongArgsName("client")
		}
		switch {
		case EqualFold(args[1], "setname"):
			r.Op = sbe.OpClientSetName
			if !arity(f, r.Op, argc, 3) {
				return false
			}
			r.Value = args[2]
		case EqualFold(args[1], "getname"):
			r.Op = sbe.OpClientGetName
			return arity(f, r.Op, argc, 2)
		case EqualFold(args[1], "setinfo"):
			r.Op = OpClientSetInfo
			if !arity(f, r.Op, argc, 4) {
				return false
			}
			r.Key, r.Value = args[2], args[3]
		default:
			return f.unknownSubcommand(args[1], "CLIENT")
		}
	case "command":
		r.Op = OpCommand
		if argc >= 2 {
			switch {
			case EqualFold(args[1], "docs"):
				r.Op = OpCommandDocs
			case EqualFold(args[1], "count"):
				r.Op = OpCommandCount
				return arity(f, r.Op, argc, 2)
			default:
				return f.unknownSubcommand(args[1], "COMMAND")
			}
		}
	case "hello":
		r.Op = OpHello
		return helloArgs(f, args, r)
	default:
		return f.unknownCommand(args)
	}
	return true
}

func map3(first byte, d, e, m sbe.Op) sbe.Op {
	switch first {
	case 'd':
		return d
	case 'e':
		return e
	}
	return m
}

// setOptions parses SET's options as Redis 7 does: NX|XX, GET, and one of
// EX|PX|EXAT|PXAT|KEEPTTL; anything else, or a clash, is a syntax error.
func setOptions(f *Failure, opts [][]byte, r *sbe.Request) bool {
	for i := 0; i < len(opts); i++ {
		o := opts[i]
		hasNext := i+1 < len(opts)
		switch {
		case EqualFold(o, "nx") && r.Flags&sbe.FlagXX == 0:
			r.Flags |= sbe.FlagNX
		case EqualFold(o, "xx") && r.Flags&sbe.FlagNX == 0:
			r.Flags |= sbe.FlagXX
		case EqualFold(o, "get"):
			r.Flags |= sbe.FlagGet
		case EqualFold(o, "keepttl") && r.Expiry == sbe.ExpiryNone:
			r.Flags |= sbe.FlagKeepTTL
		case hasNext && r.Expiry == sbe.ExpiryNone && r.Flags&sbe.FlagKeepTTL == 0 &&
			(EqualFold(o, "ex") || EqualFold(o, "px") || EqualFold(o, "exat") || EqualFold(o, "pxat")):
			switch {
			case EqualFold(o, "ex"):
				r.Expiry = sbe.ExpiryEX
			case EqualFold(o, "px"):
				r.Expiry = sbe.ExpiryPX
			case EqualFold(o, "exat"):
				r.Expiry = sbe.ExpiryEXAT
			default:
				r.Expiry = sbe.ExpiryPXAT
			}
			i++
			if !intArg(f, opts[i], &r.Expire) {
				return false
			}
		default:
			return f.set(sbe.StatusSyntax, "ERR syntax error", nil, "")
		}
	}
	return true
}

// helloArgs parses HELLO [protover [AUTH username password] [SETNAME name]].
func helloArgs(f *Failure, args [][]byte, r *sbe.Request) bool {
	if len(args) == 1 {
		return true
	}
	v, ok := resp.ParseInt(args[1])
	if !ok {
		return f.set(sbe.StatusErr, "ERR Protocol version is not an integer or out of range", nil, "")
	}
	if v < 1 {
		v = -1 // given but invalid: answered with NOPROTO
	}
	r.Amount = v
	for i := 2; i < len(args); i++ {
		left := len(args) - i - 1
		switch {
		case EqualFold(args[i], "auth") && left >= 2:
			r.Key, r.Value = args[i+1], args[i+2]
			i += 2
		case EqualFold(args[i], "setname") && left >= 1:
			r.Args = args[i+1 : i+2]
			i++
		default:
			return f.set(sbe.StatusSyntax, "ERR Syntax error in HELLO option '", args[i], "'")
		}
	}
	return true
}

// intArg reads an integer argument with Redis's string2ll rules
// (resp.ParseInt): no '+', no leading zeros, no spaces, within int64.
func intArg(f *Failure, b []byte, dst *int64) bool {
	v, ok := resp.ParseInt(b)
	if !ok {
		return f.set(sbe.StatusNotInteger, "ERR value is not an integer or out of range", nil, "")
	}
	*dst = v
	return true
}

// arity checks argc against Redis's arity convention: n > 0 exactly n
// arguments (the name included), n < 0 at least -n.
func arity(f *Failure, op sbe.Op, argc, n int) bool {
	if (n > 0 && argc != n) || (n < 0 && argc < -n) {
		return f.wrongArgs(op)
	}
	return true
}
