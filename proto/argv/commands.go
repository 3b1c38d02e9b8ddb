package argv

import (
	"math"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto/resp"
)

var eq = command.EqualFold

// parseSet reads SET's options as Redis 7 does: NX|XX, GET, and one of
// EX|PX|EXAT|PXAT|KEEPTTL (an option may repeat: the last time wins);
// anything else, or a clash, is a syntax error. The time is read only once
// every option has passed, so a bad option is reported before a bad time.
func parseSet(d *Decoder, r *command.Request, args [][]byte) bool {
	r.Key, r.Value = args[1], args[2]
	if len(args) == 3 {
		return true
	}
	at, ok := d.expiryOptions(r, args[3:], true)
	if !ok {
		return false
	}
	return at == nil || d.integer(at, &r.Expire)
}

// expiryOptions reads SET's (set) or GETEX's options into r and returns
// the time argument, if any.
func (d *Decoder) expiryOptions(r *command.Request, opts [][]byte, set bool) ([]byte, bool) {
	var at []byte
	for i := 0; i < len(opts); i++ {
		o := opts[i]
		kind := expiryWord(o)
		switch {
		case set && eq(o, "nx") && r.Flags&command.FlagXX == 0:
			r.Flags |= command.FlagNX
		case set && eq(o, "xx") && r.Flags&command.FlagNX == 0:
			r.Flags |= command.FlagXX
		case set && eq(o, "get"):
			r.Flags |= command.FlagGet
		case set && eq(o, "keepttl") && r.Expiry == command.ExpiryNone:
			r.Flags |= command.FlagKeepTTL
		case !set && eq(o, "persist") && (r.Expiry == command.ExpiryNone || r.Expiry == command.ExpiryPersist):
			r.Expiry = command.ExpiryPersist
		case kind != command.ExpiryNone && i+1 < len(opts) && (!set || r.Flags&command.FlagKeepTTL == 0) &&
			(r.Expiry == command.ExpiryNone || r.Expiry == kind):
			r.Expiry, at = kind, opts[i+1]
			i++
		default:
			return nil, d.syntax()
		}
	}
	return at, true
}

// parseGetEx reads GETEX key [EX|PX|EXAT|PXAT time|PERSIST]. A time that is
// not an integer is flagged rather than refused: Redis answers nil for a
// missing key before it reads the time.
func parseGetEx(d *Decoder, r *command.Request, args [][]byte) bool {
	r.Key = args[1]
	at, ok := d.expiryOptions(r, args[2:], false)
	if !ok {
		return false
	}
	if at != nil {
		v, ok := resp.ParseInt(at)
		if !ok {
			r.Flags |= command.FlagBadTime
		}
		r.Expire = v
	}
	return true
}

// parseSetEx reads SETEX/PSETEX key time value.
func parseSetEx(d *Decoder, r *command.Request, args [][]byte) bool {
	r.Key, r.Value, r.Expiry = args[1], args[3], command.ExpiryEX
	if r.Op == command.OpPSetEX {
		r.Expiry = command.ExpiryPX
	}
	return d.integer(args[2], &r.Expire)
}

// keyValue reads key value (SETNX, GETSET, APPEND).
func keyValue(_ *Decoder, r *command.Request, args [][]byte) bool {
	r.Key, r.Value = args[1], args[2]
	return true
}

// parseRange reads key start end (GETRANGE, SUBSTR).
func parseRange(d *Decoder, r *command.Request, args [][]byte) bool {
	r.Key = args[1]
	return d.integer(args[2], &r.Amount) && d.integer(args[3], &r.Amount2)
}

// parseSetRange reads SETRANGE key offset value; like Redis it refuses a
// negative offset here.
func parseSetRange(d *Decoder, r *command.Request, args [][]byte) bool {
	r.Key, r.Value = args[1], args[3]
	if !d.integer(args[2], &r.Amount) {
		return false
	}
	if r.Amount < 0 {
		return d.fail(command.OutOfRange, "ERR offset is out of range")
	}
	return true
}

// parseIncrByFloat keeps INCRBYFLOAT's increment as the text it is: Redis
// reads it as a long double, which a float64 would round.
func parseIncrByFloat(_ *Decoder, r *command.Request, args [][]byte) bool {
	r.Key, r.Value = args[1], args[2]
	return true
}

// keyAndNewKey reads key newkey (RENAME, RENAMENX): the new name in
// Args[0].
func keyAndNewKey(_ *Decoder, r *command.Request, args [][]byte) bool {
	r.Key, r.Args = args[1], args[2:3]
	return true
}

// parseCopy reads COPY source destination [DB db] [REPLACE].
func parseCopy(d *Decoder, r *command.Request, args [][]byte) bool {
	r.Key, r.Args = args[1], args[2:3]
	for i := 3; i < len(args); i++ {
		switch {
		case eq(args[i], "replace"):
			r.Flags |= command.FlagReplace
		case eq(args[i], "db") && i+1 < len(args):
			if !d.int32(args[i+1], &r.Amount, "") {
				return false
			}
			r.Flags |= command.FlagDB
			i++
		default:
			return d.syntax()
		}
	}
	return true
}

// parseScan reads SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]:
// the cursor in Amount (as C's strtoul reads it, so "-1" wraps), MATCH in
// Value, COUNT in Amount2, TYPE in Args[0].
func parseScan(d *Decoder, r *command.Request, args [][]byte) bool {
	c, ok := scanCursor(args[1])
	if !ok {
		return d.fail(command.Err, "ERR invalid cursor")
	}
	r.Amount = int64(c)
	for i := 2; i < len(args); i++ {
		if i+1 >= len(args) {
			return d.syntax()
		}
		switch {
		case eq(args[i], "count"):
			if !d.integer(args[i+1], &r.Amount2) {
				return false
			}
			if r.Amount2 < 1 {
				return d.syntax()
			}
		case eq(args[i], "match"):
			r.Value = args[i+1]
			r.Flags |= command.FlagMatch
		case eq(args[i], "type"):
			r.Args = args[i+1 : i+2]
			r.Flags |= command.FlagType
		default:
			return d.syntax()
		}
		i++
	}
	return true
}

// scanCursor reads a cursor as Redis does with strtoul: an optional sign
// (a minus negates, wrapping), then decimal digits; no leading space, no
// overflow. The empty string is 0.
func scanCursor(b []byte) (uint64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		neg = b[0] == '-'
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	v, ok := resp.ParseDigits(b, 1<<64-1)
	if !ok {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// keyAt2 reads the key of OBJECT ENCODING and the like: args[2].
func keyAt2(_ *Decoder, r *command.Request, args [][]byte) bool {
	r.Key = args[2]
	return true
}

// parseMemoryUsage reads MEMORY USAGE key [SAMPLES count]; goblin's figure
// is exact, so the count is checked and dropped.
func parseMemoryUsage(d *Decoder, r *command.Request, args [][]byte) bool {
	r.Key = args[2]
	for i := 3; i < len(args); i++ {
		if !eq(args[i], "samples") || i+1 >= len(args) {
			return d.syntax()
		}
		var n int64
		if !d.integer(args[i+1], &n) {
			return false
		}
		if n < 0 {
			return d.syntax()
		}
		i++
	}
	return true
}

// parseRestore reads RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME
// s] [FREQ f]: the ttl in Expire (Expiry PX, or PXAT with ABSTTL; none for
// 0), the payload in Value, IDLETIME's seconds in Amount (with FlagIdle),
// FREQ's counter in Amount (with FlagFreq; the two exclude each other).
func parseRestore(d *Decoder, r *command.Request, args [][]byte) bool {
	r.Key, r.Value = args[1], args[3]
	absTTL, idle, freq := false, false, false
	for i := 4; i < len(args); i++ {
		more := i+1 < len(args)
		switch {
		case eq(args[i], "replace"):
			r.Flags |= command.FlagReplace
		case eq(args[i], "absttl"):
			absTTL = true
		case eq(args[i], "idletime") && more && !freq:
			var v int64
			if !d.integer(args[i+1], &v) {
				return false
			}
			if v < 0 {
				return d.fail(command.Err, "ERR Invalid IDLETIME value, must be >= 0")
			}
			idle = true
			r.Flags |= command.FlagIdle
			r.Amount = v
			i++
		case eq(args[i], "freq") && more && !idle:
			var v int64
			if !d.integer(args[i+1], &v) {
				return false
			}
			if v < 0 || v > 255 {
				return d.fail(command.Err, "ERR Invalid FREQ value, must be >= 0 and <= 255")
			}
			freq = true
			r.Flags |= command.FlagFreq
			r.Amount = v
			i++
		default:
			return d.syntax()
		}
	}
	// Redis checks the TTL after BUSYKEY, which needs the keyspace: a bad
	// one is passed on as a negative Expire for the engine to refuse.
	if v, ok := resp.ParseInt(args[2]); !ok {
		r.Expire = RestoreTTLNotInteger
	} else {
		r.Expire = max(v, RestoreTTLNotInteger+1)
	}
	switch {
	case r.Expire <= 0:
	case absTTL:
		r.Expiry = command.ExpiryPXAT
	default:
		r.Expiry = command.ExpiryPX
	}
	return true
}

// RestoreTTLNotInteger is RESTORE's Expire when its ttl is not an
// integer; any other negative Expire is a negative ttl. The engine
// refuses both, after its BUSYKEY check, with Redis's texts.
const RestoreTTLNotInteger = math.MinInt64

// parseSwapDB reads SWAPDB index1 index2 with Redis's texts.
func parseSwapDB(d *Decoder, r *command.Request, args [][]byte) bool {
	return d.int32(args[1], &r.Amount, "ERR invalid first DB index") &&
		d.int32(args[2], &r.Amount2, "ERR invalid second DB index")
}

// parseMove reads MOVE key db.
func parseMove(d *Decoder, r *command.Request, args [][]byte) bool {
	r.Key = args[1]
	return d.int32(args[2], &r.Amount, "")
}

// expiryWord maps EX, PX, EXAT and PXAT (any case) to their Expiry.
func expiryWord(o []byte) command.Expiry {
	switch {
	case eq(o, "ex"):
		return command.ExpiryEX
	case eq(o, "px"):
		return command.ExpiryPX
	case eq(o, "exat"):
		return command.ExpiryEXAT
	case eq(o, "pxat"):
		return command.ExpiryPXAT
	}
	return command.ExpiryNone
}

// parseExpire reads EXPIRE key time [NX|XX|GT|LT]...; like Redis it checks
// the options before the time.
func parseExpire(d *Decoder, r *command.Request, args [][]byte) bool {
	r.Key = args[1]
	for _, o := range args[3:] {
		switch {
		case eq(o, "nx"):
			r.Flags |= command.FlagNX
		case eq(o, "xx"):
			r.Flags |= command.FlagXX
		case eq(o, "gt"):
			r.Flags |= command.FlagGT
		case eq(o, "lt"):
			r.Flags |= command.FlagLT
		default:
			return d.failQuoting(command.Syntax, "ERR Unsupported option ", o, "")
		}
	}
	if text := ExpireFlagsError(r.Flags); text != "" {
		return d.fail(command.Syntax, text)
	}
	return d.integer(args[2], &r.Amount)
}

// ExpireFlagsError returns the error text for the EXPIRE option
// combinations Redis 7 rejects, or "" when f is acceptable.
func ExpireFlagsError(f command.Flags) string {
	if f&command.FlagNX != 0 && f&(command.FlagXX|command.FlagGT|command.FlagLT) != 0 {
		return "ERR NX and XX, GT or LT options at the same time are not compatible"
	}
	if f&command.FlagGT != 0 && f&command.FlagLT != 0 {
		return "ERR GT and LT options at the same time are not compatible"
	}
	return ""
}

func parseMSet(d *Decoder, r *command.Request, args [][]byte) bool {
	if len(args)%2 == 0 {
		return d.wrongArgs(command.Name(r.Op))
	}
	r.Key, r.Value, r.Args = args[1], args[2], args[3:]
	return true
}

// parseFlush accepts FLUSHALL/FLUSHDB [ASYNC|SYNC]; goblin always frees at
// once, so the word is checked and dropped.
func parseFlush(d *Decoder, _ *command.Request, args [][]byte) bool {
	if len(args) > 2 || (len(args) == 2 && !eq(args[1], "async") && !eq(args[1], "sync")) {
		return d.syntax()
	}
	return true
}

// parseAuth reads AUTH [user] password: user in Key (empty: none),
// password in Value.
func parseAuth(d *Decoder, r *command.Request, args [][]byte) bool {
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
func parseSetInfo(d *Decoder, r *command.Request, args [][]byte) bool {
	if !eq(args[2], "lib-name") && !eq(args[2], "lib-ver") {
		return d.failQuoting(command.Syntax, "ERR Unrecognized option '", args[2], "'")
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
func parseCommandList(d *Decoder, r *command.Request, args [][]byte) bool {
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
func parseHello(d *Decoder, r *command.Request, args [][]byte) bool {
	if len(args) == 1 {
		return true
	}
	v, ok := resp.ParseInt(args[1])
	if !ok {
		return d.fail(command.Err, "ERR Protocol version is not an integer or out of range")
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
			r.Flags |= command.FlagHelloAuth
			i += 2
		case eq(args[i], "setname") && left >= 1:
			r.Args = args[i+1 : i+2]
			r.Flags |= command.FlagHelloSetName
			i++
		default:
			return d.failQuoting(command.Syntax, "ERR Syntax error in HELLO option '", args[i], "'")
		}
	}
	return true
}

// parseFlushFunction reads FUNCTION FLUSH [ASYNC|SYNC].
func parseFlushFunction(d *Decoder, _ *command.Request, args [][]byte) bool {
	if len(args) > 3 || (len(args) == 3 && !eq(args[2], "async") && !eq(args[2], "sync")) {
		return d.fail(command.Err, "ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
	}
	return true
}
