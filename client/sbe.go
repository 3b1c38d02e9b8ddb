package client

import (
	"fmt"

	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/proto/sbe"
)

// sbeCodec speaks goblin's SBE protocol through package proto/sbe. Typed
// calls and Do share one path: the argument list (as a Redis client would
// send it) is translated to one Request message. Replies carry the
// request's correlation id, which is checked.
type sbeCodec struct {
	framed bool // SOFH framing on stream transports
	c      sbe.Codec
	req    sbe.Request
	rep    sbe.Reply
	sent   uint64 // correlation id of the last request encoded
	recv   uint64 // correlation id of the last reply decoded
}

func newSBECodec(framed bool) (codec, error) { return &sbeCodec{framed: framed}, nil }

// reset forgets replies still owed by a dropped connection.
func (s *sbeCodec) reset() { s.recv = s.sent }

// eq reports whether b is name, ignoring ASCII case; name is upper case.
func eq(b []byte, name string) bool {
	if len(b) != len(name) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		if c != name[i] {
			return false
		}
	}
	return true
}

// atoi reads an integer argument with the rules the server applies to the
// same argument over RESP (resp.ParseInt, Redis's string2ll), so "+5" or
// "007" fail alike in both protocols.
func atoi(b []byte) (int64, error) {
	v, ok := resp.ParseInt(b)
	if !ok {
		return 0, fmt.Errorf("client: %q is not an integer or out of range", b)
	}
	return v, nil
}

// arity checks the argument count is within [min, max] (max < 0: no limit).
func arity(args [][]byte, min, max int) error {
	if len(args) < min || (max >= 0 && len(args) > max) {
		return fmt.Errorf("client: wrong number of arguments for '%s' command", args[0])
	}
	return nil
}

// keyOp returns the Op of the commands that take exactly one key.
func keyOp(name []byte) (sbe.Op, bool) {
	switch {
	case eq(name, "GET"):
		return sbe.OpGet, true
	case eq(name, "TTL"):
		return sbe.OpTTL, true
	case eq(name, "PTTL"):
		return sbe.OpPTTL, true
	case eq(name, "PERSIST"):
		return sbe.OpPersist, true
	case eq(name, "INCR"):
		return sbe.OpIncr, true
	case eq(name, "DECR"):
		return sbe.OpDecr, true
	case eq(name, "TYPE"):
		return sbe.OpType, true
	}
	return 0, false
}

func (s *sbeCodec) appendRequest(dst []byte, args [][]byte, _ uint64) ([]byte, error) {
	r := &s.req
	*r = sbe.Request{Args: r.Args[:0]}
	if err := s.translate(r, args); err != nil {
		return dst, err
	}
	s.sent++
	r.CorrelationID = s.sent
	if s.framed {
		return sbe.AppendFramed(dst, &s.c, r), nil
	}
	return s.c.AppendRequest(dst, r), nil
}

// translate fills r from a Redis-style argument list.
func (s *sbeCodec) translate(r *sbe.Request, args [][]byte) error {
	if len(args) == 0 {
		return fmt.Errorf("client: empty command")
	}
	name := args[0]
	var err error
	switch {
	case eq(name, "PING"):
		r.Op = sbe.OpPing
		if err = arity(args, 1, 2); err == nil && len(args) == 2 {
			r.Value = args[1]
		}
	case eq(name, "ECHO"):
		r.Op = sbe.OpEcho
		if err = arity(args, 2, 2); err == nil {
			r.Value = args[1]
		}
	case eq(name, "SET"):
		r.Op = sbe.OpSet
		if err = arity(args, 3, -1); err == nil {
			r.Key, r.Value = args[1], args[2]
			err = setOptions(r, args)
		}
	case isKeyOp(name):
		r.Op, _ = keyOp(name)
		if err = arity(args, 2, 2); err == nil {
			r.Key = args[1]
		}
	case eq(name, "DEL"), eq(name, "EXISTS"), eq(name, "MGET"):
		r.Op = sbe.OpDel
		if eq(name, "EXISTS") {
			r.Op = sbe.OpExists
		} else if eq(name, "MGET") {
			r.Op = sbe.OpMGet
		}
		if err = arity(args, 2, -1); err == nil {
			r.Key, r.Args = args[1], append(r.Args, args[2:]...)
		}
	case eq(name, "MSET"):
		r.Op = sbe.OpMSet
		if err = arity(args, 3, -1); err == nil && len(args)%2 == 0 {
			err = fmt.Errorf("client: wrong number of arguments for '%s' command", name)
		}
		if err == nil {
			r.Key, r.Value, r.Args = args[1], args[2], append(r.Args, args[3:]...)
		}
	case eq(name, "EXPIRE"), eq(name, "PEXPIRE"), eq(name, "INCRBY"), eq(name, "DECRBY"):
		switch {
		case eq(name, "EXPIRE"):
			r.Op = sbe.OpExpire
		case eq(name, "PEXPIRE"):
			r.Op = sbe.OpPExpire
		case eq(name, "INCRBY"):
			r.Op = sbe.OpIncrBy
		default:
			r.Op = sbe.OpDecrBy
		}
		most := 3
		if r.Op == sbe.OpExpire || r.Op == sbe.OpPExpire {
			most = -1 // EXPIRE key n [NX|XX|GT|LT ...]; the server judges combinations
		}
		if err = arity(args, 3, most); err == nil {
			r.Key = args[1]
			r.Amount, err = atoi(args[2])
		}
		for _, a := range args[min(3, len(args)):] {
			if err != nil {
				break
			}
			switch {
			case eq(a, "NX"):
				r.Flags |= sbe.FlagNX
			case eq(a, "XX"):
				r.Flags |= sbe.FlagXX
			case eq(a, "GT"):
				r.Flags |= sbe.FlagGT
			case eq(a, "LT"):
				r.Flags |= sbe.FlagLT
			default:
				err = fmt.Errorf("client: unsupported option %q for '%s' command", a, name)
			}
		}
	case eq(name, "DBSIZE"), eq(name, "FLUSHALL"), eq(name, "FLUSHDB"), eq(name, "QUIT"):
		switch {
		case eq(name, "DBSIZE"):
			r.Op = sbe.OpDBSize
		case eq(name, "FLUSHALL"):
			r.Op = sbe.OpFlushAll
		case eq(name, "FLUSHDB"):
			r.Op = sbe.OpFlushDB
		default:
			r.Op = sbe.OpQuit
		}
		err = arity(args, 1, 2) // FLUSHALL [ASYNC|SYNC] is accepted and ignored
	case eq(name, "INFO"):
		r.Op = sbe.OpInfo
		r.Args = append(r.Args, args[1:]...)
	case eq(name, "AUTH"):
		r.Op = sbe.OpAuth
		if err = arity(args, 2, 3); err == nil {
			r.Value = args[len(args)-1]
		}
	case eq(name, "SELECT"):
		r.Op = sbe.OpSelect
		if err = arity(args, 2, 2); err == nil {
			r.Amount, err = atoi(args[1])
		}
	case eq(name, "CONFIG") && len(args) >= 3 && eq(args[1], "GET"):
		r.Op = sbe.OpConfigGet
		r.Key, r.Args = args[2], append(r.Args, args[3:]...)
	case eq(name, "CLIENT") && len(args) == 3 && eq(args[1], "SETNAME"):
		r.Op, r.Value = sbe.OpClientSetName, args[2]
	case eq(name, "CLIENT") && len(args) == 2 && eq(args[1], "GETNAME"):
		r.Op = sbe.OpClientGetName
	default:
		return fmt.Errorf("client: command %q has no SBE encoding (use proto=resp)", name)
	}
	return err
}

func isKeyOp(name []byte) bool { _, ok := keyOp(name); return ok }

// setOptions reads SET's options after key and value.
func setOptions(r *sbe.Request, args [][]byte) error {
	for i := 3; i < len(args); i++ {
		a := args[i]
		switch {
		case eq(a, "NX"):
			r.Flags |= sbe.FlagNX
		case eq(a, "XX"):
			r.Flags |= sbe.FlagXX
		case eq(a, "GET"):
			r.Flags |= sbe.FlagGet
		case eq(a, "KEEPTTL"):
			r.Flags |= sbe.FlagKeepTTL
		case eq(a, "EX"), eq(a, "PX"), eq(a, "EXAT"), eq(a, "PXAT"):
			if r.Expiry != sbe.ExpiryNone || i+1 >= len(args) {
				return fmt.Errorf("client: syntax error in SET options")
			}
			switch {
			case eq(a, "EX"):
				r.Expiry = sbe.ExpiryEX
			case eq(a, "PX"):
				r.Expiry = sbe.ExpiryPX
			case eq(a, "EXAT"):
				r.Expiry = sbe.ExpiryEXAT
			default:
				r.Expiry = sbe.ExpiryPXAT
			}
			i++
			v, err := atoi(args[i])
			if err != nil {
				return err
			}
			r.Expire = v
		default:
			return fmt.Errorf("client: syntax error in SET options: %q", a)
		}
	}
	return nil
}

func (s *sbeCodec) parseReply(buf []byte, r *reply) (int, error) {
	var msg []byte
	var n int
	if s.framed {
		var err error
		msg, n, err = sbe.ReadFrame(buf, 0)
		if err != nil {
			return 0, fmt.Errorf("%w: %w", ErrProtocol, err)
		}
		if n == 0 {
			return 0, nil
		}
	} else {
		if len(buf) == 0 {
			return 0, nil
		}
		// Message transports hand over whole messages, so a non-empty
		// buffer starts with a complete one.
		l, err := s.c.MessageLen(buf)
		if err != nil {
			return 0, fmt.Errorf("%w: %w", ErrProtocol, err)
		}
		msg, n = buf[:l], l
	}
	rep := &s.rep
	if err := s.c.DecodeReply(msg, rep); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrProtocol, err)
	}
	if rep.CorrelationID != s.recv+1 {
		return 0, fmt.Errorf("%w: reply correlation id %d, want %d", ErrProtocol, rep.CorrelationID, s.recv+1)
	}
	s.recv++
	r.reset()
	if rep.Status != sbe.StatusOK || rep.Kind == sbe.KindError {
		r.kind, r.str = KindError, rep.Value
		return n, nil
	}
	if err := sbeItem(r, rep.Kind, rep.Integer, rep.Value); err != nil {
		return 0, err
	}
	if rep.Kind == sbe.KindArray {
		if cap(r.elems) < len(rep.Items) {
			r.elems = make([]reply, len(rep.Items))
		}
		r.elems = r.elems[:len(rep.Items)]
		for i := range rep.Items {
			it := &rep.Items[i]
			r.elems[i].reset()
			if it.Kind == sbe.KindArray {
				return 0, fmt.Errorf("%w: nested array item", ErrProtocol)
			}
			if err := sbeItem(&r.elems[i], it.Kind, it.Integer, it.Value); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

func sbeItem(r *reply, k sbe.Kind, n int64, v []byte) error {
	switch k {
	case sbe.KindSimple:
		r.kind, r.str = KindStatus, v
	case sbe.KindBulk:
		r.kind, r.str = KindBulk, v
	case sbe.KindNil:
		r.kind = KindNil
	case sbe.KindInteger:
		r.kind, r.n = KindInt, n
	case sbe.KindArray:
		r.kind = KindArray
	case sbe.KindError:
		r.kind, r.str = KindError, v
	default:
		return fmt.Errorf("%w: unknown reply kind %d", ErrProtocol, k)
	}
	return nil
}
