package command

import (
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/proto/sbe"
)

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

// equalFold reports whether b equals the lower-case ASCII word s, ignoring
// case.
func equalFold(b []byte, s string) bool {
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

// decodeRESP turns the arguments of one RESP command into r. When the
// command is unknown or malformed it records the error reply in e.res and
// returns false; nothing is executed then.
func (e *Engine) decodeRESP(args [][]byte, r *Request) bool {
	*r = Request{}
	e.resetResult()
	var low [16]byte
	n, ok := lowerName(&low, args[0])
	if !ok {
		return e.unknownCommand(args)
	}
	argc := len(args)
	switch string(low[:n]) {
	case "get":
		r.Op = OpGet
		if !e.arity(r.Op, argc, 2) {
			return false
		}
		r.Key = args[1]
	case "set":
		r.Op = OpSet
		if !e.arity(r.Op, argc, -3) {
			return false
		}
		r.Key, r.Value = args[1], args[2]
		return e.setOptions(args[3:], r)
	case "ping":
		r.Op = OpPing
		if argc > 2 {
			return e.wrongArgs(r.Op)
		}
		r.Args = args[1:]
	case "echo":
		r.Op = OpEcho
		if !e.arity(r.Op, argc, 2) {
			return false
		}
		r.Value = args[1]
	case "del", "exists", "mget":
		r.Op = map3(low[0], OpDel, OpExists, OpMGet)
		if !e.arity(r.Op, argc, -2) {
			return false
		}
		r.Key, r.Args = args[1], args[2:]
	case "mset":
		r.Op = OpMSet
		if argc < 3 || argc%2 == 0 {
			return e.wrongArgs(r.Op)
		}
		r.Key, r.Value, r.Args = args[1], args[2], args[3:]
	case "expire", "pexpire":
		r.Op = OpExpire
		if low[0] == 'p' {
			r.Op = OpPExpire
		}
		if !e.arity(r.Op, argc, -3) {
			return false
		}
		r.Key = args[1]
		// Like Redis, the options are checked before the time.
		for _, o := range args[3:] {
			switch {
			case equalFold(o, "nx"):
				r.Flags |= sbe.FlagNX
			case equalFold(o, "xx"):
				r.Flags |= sbe.FlagXX
			case equalFold(o, "gt"):
				r.Flags |= sbe.FlagGT
			case equalFold(o, "lt"):
				r.Flags |= sbe.FlagLT
			default:
				return e.fail(sbe.StatusSyntax, "ERR Unsupported option ", o, "")
			}
		}
		if !e.expireFlagsOK(r.Flags) {
			return false
		}
		return e.intArg(args[2], &r.Amount)
	case "ttl", "pttl", "persist", "incr", "decr", "type":
		switch string(low[:n]) {
		case "ttl":
			r.Op = OpTTL
		case "pttl":
			r.Op = OpPTTL
		case "persist":
			r.Op = OpPersist
		case "incr":
			r.Op = OpIncr
		case "decr":
			r.Op = OpDecr
		default:
			r.Op = OpType
		}
		if !e.arity(r.Op, argc, 2) {
			return false
		}
		r.Key = args[1]
	case "incrby", "decrby":
		r.Op = OpIncrBy
		if low[0] == 'd' {
			r.Op = OpDecrBy
		}
		if !e.arity(r.Op, argc, 3) {
			return false
		}
		r.Key = args[1]
		return e.intArg(args[2], &r.Amount)
	case "dbsize":
		r.Op = OpDBSize
		return e.arity(r.Op, argc, 1)
	case "flushall", "flushdb":
		r.Op = OpFlushAll
		if n == 7 {
			r.Op = OpFlushDB
		}
		if argc > 2 {
			return e.fail(sbe.StatusSyntax, "ERR syntax error", nil, "")
		}
		if argc == 2 && !equalFold(args[1], "async") && !equalFold(args[1], "sync") {
			return e.fail(sbe.StatusSyntax, "ERR syntax error", nil, "")
		}
	case "info":
		r.Op = OpInfo
		r.Args = args[1:]
	case "auth":
		r.Op = OpAuth
		switch argc {
		case 2:
			r.Value = args[1]
		case 3:
			r.Key, r.Value = args[1], args[2]
		default:
			return e.fail(sbe.StatusSyntax, "ERR syntax error", nil, "")
		}
	case "select":
		r.Op = OpSelect
		if !e.arity(r.Op, argc, 2) {
			return false
		}
		return e.intArg(args[1], &r.Amount)
	case "quit":
		r.Op = OpQuit
	case "config":
		if argc < 2 {
			return e.wrongArgsName("config")
		}
		if !equalFold(args[1], "get") {
			return e.unknownSubcommand(args[1], "CONFIG")
		}
		r.Op = OpConfigGet
		if argc < 3 {
			return e.wrongArgs(r.Op)
		}
		r.Key, r.Args = args[2], args[3:]
	case "client":
		if argc < 2 {
			return e.wrongArgsName("client")
		}
		switch {
		case equalFold(args[1], "setname"):
			r.Op = OpClientSetName
			if !e.arity(r.Op, argc, 3) {
				return false
			}
			r.Value = args[2]
		case equalFold(args[1], "getname"):
			r.Op = OpClientGetName
			return e.arity(r.Op, argc, 2)
		case equalFold(args[1], "setinfo"):
			r.Op = OpClientSetInfo
			if !e.arity(r.Op, argc, 4) {
				return false
			}
			r.Key, r.Value = args[2], args[3]
		default:
			return e.unknownSubcommand(args[1], "CLIENT")
		}
	case "command":
		r.Op = OpCommand
		if argc >= 2 {
			switch {
			case equalFold(args[1], "docs"):
				r.Op = OpCommandDocs
			case equalFold(args[1], "count"):
				r.Op = OpCommandCount
				return e.arity(r.Op, argc, 2)
			default:
				return e.unknownSubcommand(args[1], "COMMAND")
			}
		}
	case "hello":
		r.Op = OpHello
		return e.helloArgs(args, r)
	default:
		return e.unknownCommand(args)
	}
	return true
}

func map3(first byte, d, e, m Op) Op {
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
func (e *Engine) setOptions(opts [][]byte, r *Request) bool {
	for i := 0; i < len(opts); i++ {
		o := opts[i]
		hasNext := i+1 < len(opts)
		switch {
		case equalFold(o, "nx") && r.Flags&sbe.FlagXX == 0:
			r.Flags |= sbe.FlagNX
		case equalFold(o, "xx") && r.Flags&sbe.FlagNX == 0:
			r.Flags |= sbe.FlagXX
		case equalFold(o, "get"):
			r.Flags |= sbe.FlagGet
		case equalFold(o, "keepttl") && r.Expiry == sbe.ExpiryNone:
			r.Flags |= sbe.FlagKeepTTL
		case hasNext && r.Expiry == sbe.ExpiryNone && r.Flags&sbe.FlagKeepTTL == 0 &&
			(equalFold(o, "ex") || equalFold(o, "px") || equalFold(o, "exat") || equalFold(o, "pxat")):
			switch {
			case equalFold(o, "ex"):
				r.Expiry = sbe.ExpiryEX
			case equalFold(o, "px"):
				r.Expiry = sbe.ExpiryPX
			case equalFold(o, "exat"):
				r.Expiry = sbe.ExpiryEXAT
			default:
				r.Expiry = sbe.ExpiryPXAT
			}
			i++
			if !e.intArg(opts[i], &r.Expire) {
				return false
			}
		default:
			return e.fail(sbe.StatusSyntax, "ERR syntax error", nil, "")
		}
	}
	return true
}

// helloArgs parses HELLO [protover [AUTH username password] [SETNAME name]].
func (e *Engine) helloArgs(args [][]byte, r *Request) bool {
	if len(args) == 1 {
		return true
	}
	v, ok := resp.ParseInt(args[1])
	if !ok {
		return e.fail(sbe.StatusErr, "ERR Protocol version is not an integer or out of range", nil, "")
	}
	if v < 1 {
		v = -1 // given but invalid: answered with NOPROTO
	}
	r.Amount = v
	for i := 2; i < len(args); i++ {
		left := len(args) - i - 1
		switch {
		case equalFold(args[i], "auth") && left >= 2:
			r.Key, r.Value = args[i+1], args[i+2]
			i += 2
		case equalFold(args[i], "setname") && left >= 1:
			r.Args = args[i+1 : i+2]
			i++
		default:
			return e.fail(sbe.StatusSyntax, "ERR Syntax error in HELLO option '", args[i], "'")
		}
	}
	return true
}

func (e *Engine) intArg(b []byte, dst *int64) bool {
	v, ok := resp.ParseInt(b)
	if !ok {
		return e.fail(sbe.StatusNotInteger, "ERR value is not an integer or out of range", nil, "")
	}
	*dst = v
	return true
}

// arity checks argc against Redis's arity convention: n > 0 exactly n
// arguments (the name included), n < 0 at least -n.
func (e *Engine) arity(op Op, argc, n int) bool {
	if (n > 0 && argc != n) || (n < 0 && argc < -n) {
		return e.wrongArgs(op)
	}
	return true
}

func (e *Engine) wrongArgs(op Op) bool { return e.wrongArgsName(OpName(op)) }

func (e *Engine) wrongArgsName(name string) bool {
	e.errBuf = append(e.errBuf[:0], "ERR wrong number of arguments for '"...)
	e.errBuf = append(e.errBuf, name...)
	e.errBuf = append(e.errBuf, "' command"...)
	e.setError(sbe.StatusWrongArgs, e.errBuf)
	return false
}

func (e *Engine) unknownSubcommand(sub []byte, cmd string) bool {
	e.errBuf = append(e.errBuf[:0], "ERR unknown subcommand '"...)
	e.errBuf = appendSanitized(e.errBuf, sub, 128)
	e.errBuf = append(e.errBuf, "'. Try "...)
	e.errBuf = append(e.errBuf, cmd...)
	e.errBuf = append(e.errBuf, " HELP."...)
	e.setError(sbe.StatusUnknownCommand, e.errBuf)
	return false
}

// unknownCommand writes Redis 7's text: ERR unknown command 'foo', with
// args beginning with: 'a' 'b' (each argument quoted and followed by a
// space, arguments added while the list is shorter than 128 bytes, each
// cut to what is left of the 128).
func (e *Engine) unknownCommand(args [][]byte) bool {
	b := append(e.errBuf[:0], "ERR unknown command '"...)
	b = appendSanitized(b, args[0], 128)
	b = append(b, "', with args beginning with: "...)
	start := len(b)
	for _, a := range args[1:] {
		used := len(b) - start
		if used >= 128 {
			break
		}
		b = append(b, '\'')
		b = appendSanitized(b, a, 128-used)
		b = append(b, "' "...)
	}
	e.errBuf = b
	e.setError(sbe.StatusUnknownCommand, e.errBuf)
	return false
}

// appendSanitized appends at most max bytes of s with CR and LF replaced by
// spaces, as Redis does for error texts.
func appendSanitized(b, s []byte, max int) []byte {
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

// fail records an error reply whose text is prefix + arg + suffix.
func (e *Engine) fail(st sbe.Status, prefix string, arg []byte, suffix string) bool {
	e.errBuf = append(e.errBuf[:0], prefix...)
	e.errBuf = appendSanitized(e.errBuf, arg, 128)
	e.errBuf = append(e.errBuf, suffix...)
	e.setError(st, e.errBuf)
	return false
}
