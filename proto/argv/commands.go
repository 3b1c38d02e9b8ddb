package argv

import (
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/reply"
	"github.com/goblin-kv/goblin/request"
)

var eq = request.EqualFold

// parseSet reads SET's options as Redis 7 does: NX|XX, GET, and one of
// EX|PX|EXAT|PXAT|KEEPTTL; anything else, or a clash, is a syntax error.
func parseSet(d *Decoder, r *request.Request, args [][]byte) bool {
	r.Key, r.Value = args[1], args[2]
	opts := args[3:]
	for i := 0; i < len(opts); i++ {
		o := opts[i]
		switch {
		case eq(o, "nx") && r.Flags&request.FlagXX == 0:
			r.Flags |= request.FlagNX
		case eq(o, "xx") && r.Flags&request.FlagNX == 0:
			r.Flags |= request.FlagXX
		case eq(o, "get"):
			r.Flags |= request.FlagGet
		case eq(o, "keepttl") && r.Expiry == request.ExpiryNone:
			r.Flags |= request.FlagKeepTTL
		case i+1 < len(opts) && r.Expiry == request.ExpiryNone && r.Flags&request.FlagKeepTTL == 0:
			if r.Expiry = expiryWord(o); r.Expiry == request.ExpiryNone {
				return d.syntax()
			}
			i++
			if !d.integer(opts[i], &r.Expire) {
				return false
			}
		default:
			return d.syntax()
		}
	}
	return true
}

// expiryWord maps EX, PX, EXAT and PXAT (any case) to their Expiry.
func expiryWord(o []byte) request.Expiry {
	switch {
	case eq(o, "ex"):
		return request.ExpiryEX
	case eq(o, "px"):
		return request.ExpiryPX
	case eq(o, "exat"):
		return request.ExpiryEXAT
	case eq(o, "pxat"):
		return request.ExpiryPXAT
	}
	return request.ExpiryNone
}

// parseExpire reads EXPIRE key time [NX|XX|GT|LT]...; like Redis it checks
// the options before the time.
func parseExpire(d *Decoder, r *request.Request, args [][]byte) bool {
	r.Key = args[1]
	for _, o := range args[3:] {
		switch {
		case eq(o, "nx"):
			r.Flags |= request.FlagNX
		case eq(o, "xx"):
			r.Flags |= request.FlagXX
		case eq(o, "gt"):
			r.Flags |= request.FlagGT
		case eq(o, "lt"):
			r.Flags |= request.FlagLT
		default:
			return d.failQuoting(reply.Syntax, "ERR Unsupported option ", o, "")
		}
	}
	if text := ExpireFlagsError(r.Flags); text != "" {
		return d.fail(reply.Syntax, text)
	}
	return d.integer(args[2], &r.Amount)
}

// ExpireFlagsError returns the error text for the EXPIRE option
// combinations Redis 7 rejects, or "" when f is acceptable.
func ExpireFlagsError(f request.Flags) string {
	if f&request.FlagNX != 0 && f&(request.FlagXX|request.FlagGT|request.FlagLT) != 0 {
		return "ERR NX and XX, GT or LT options at the same time are not compatible"
	}
	if f&request.FlagGT != 0 && f&request.FlagLT != 0 {
		return "ERR GT and LT options at the same time are not compatible"
	}
	return ""
}

func parseMSet(d *Decoder, r *request.Request, args [][]byte) bool {
	if len(args)%2 == 0 {
		return d.wrongArgs(request.Name(r.Op))
	}
	r.Key, r.Value, r.Args = args[1], args[2], args[3:]
	return true
}

// parseFlush accepts FLUSHALL/FLUSHDB [ASYNC|SYNC]; goblin always frees at
// once, so the word is checked and dropped.
func parseFlush(d *Decoder, _ *request.Request, args [][]byte) bool {
	if len(args) > 2 || (len(args) == 2 && !eq(args[1], "async") && !eq(args[1], "sync")) {
		return d.syntax()
	}
	return true
}

// parseAuth reads AUTH [user] password: user in Key (empty: none),
// password in Value.
func parseAuth(d *Decoder, r *request.Request, args [][]byte) bool {
	switch len(args) {
	case 2:
		r.Value = args[1]
	case 3:
		r.Key, r.Value = args[1], args[2]
	default:
		return d.syntax()
	}
	return true
}

// parseSetInfo reads CLIENT SETINFO attr value: attribute in Key, value in
// Value.
func parseSetInfo(d *Decoder, r *request.Request, args [][]byte) bool {
	if !eq(args[2], "lib-name") && !eq(args[2], "lib-ver") {
		return d.failQuoting(reply.Syntax, "ERR Unrecognized option '", args[2], "'")
	}
	r.Key, r.Value = args[2], args[3]
	return true
}

// The COMMAND LIST filters, in Amount.
const (
	ListAll    = 0
	ListModule = 1 // FILTERBY MODULE name
	ListACLCat = 2 // FILTERBY ACLCAT category
	ListMatch  = 3 // FILTERBY PATTERN pattern
)

// parseCommandList reads COMMAND LIST [FILTERBY MODULE m|ACLCAT c|PATTERN
// p]: the filter in Amount, its argument in Value.
func parseCommandList(d *Decoder, r *request.Request, args [][]byte) bool {
	switch {
	case len(args) == 2:
		return true
	case len(args) != 5 || !eq(args[2], "filterby"):
		return d.syntax()
	case eq(args[3], "module"):
		r.Amount = ListModule
	case eq(args[3], "aclcat"):
		r.Amount = ListACLCat
	case eq(args[3], "pattern"):
		r.Amount = ListMatch
	default:
		return d.syntax()
	}
	r.Value = args[4]
	return true
}

// parseHello reads HELLO [protover [AUTH username password] [SETNAME
// name]]: the version in Amount (0 when absent, -1 when given but below
// 1), AUTH's user and password in Key and Value, SETNAME's name in Args[0],
// each flagged.
func parseHello(d *Decoder, r *request.Request, args [][]byte) bool {
	if len(args) == 1 {
		return true
	}
	v, ok := resp.ParseInt(args[1])
	if !ok {
		return d.fail(reply.Err, "ERR Protocol version is not an integer or out of range")
	}
	r.Amount = max(v, -1)
	if v < 1 {
		r.Amount = -1 // given but invalid: answered with NOPROTO
	}
	for i := 2; i < len(args); i++ {
		left := len(args) - i - 1
		switch {
		case eq(args[i], "auth") && left >= 2:
			r.Key, r.Value = args[i+1], args[i+2]
			r.Flags |= request.FlagHelloAuth
			i += 2
		case eq(args[i], "setname") && left >= 1:
			r.Args = args[i+1 : i+2]
			r.Flags |= request.FlagHelloSetName
			i++
		default:
			return d.failQuoting(reply.Syntax, "ERR Syntax error in HELLO option '", args[i], "'")
		}
	}
	return true
}
