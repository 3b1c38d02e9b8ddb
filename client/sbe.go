package client

import (
	"fmt"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto/argv"
	"github.com/goblin-kv/goblin/proto/sbe"
)

// sbeCodec speaks goblin's SBE protocol through package proto/sbe. Typed
// calls hand it the request they built; Do's argument lists (as a Redis
// client would send them) are decoded into a request with proto/argv, the
// decoder the server runs on RESP, so both protocols accept the same
// commands and reject them with the same text. Replies carry the request's
// correlation id, which is checked.
type sbeCodec struct {
	framed bool // SOFH framing on stream transports
	c      sbe.Codec
	req    command.Request
	rep    command.Reply
	dec    argv.Decoder // why the last translation failed
	sent   uint64       // correlation id of the last request encoded
	recv   uint64       // correlation id of the last reply decoded
}

// txtPong is a Pong's status text, as the general decode gives it.
var txtPong = []byte("PONG")[:4:4]

func newSBECodec(framed bool) (codec, error) { return &sbeCodec{framed: framed}, nil }

// reset forgets replies still owed by a dropped connection.
func (s *sbeCodec) reset() { s.recv = s.sent }

// appendPing appends a bare PING's request: what appendTyped writes for
// it on a message transport (TestPingShortcutMatchesAppendTyped).
func (s *sbeCodec) appendPing(dst []byte) []byte {
	s.sent++
	return sbe.AppendPing(dst, s.sent)
}

func (s *sbeCodec) appendRequest(dst []byte, args [][]byte, _ uint64) ([]byte, error) {
	r := &s.req
	if err := s.translate(r, args); err != nil {
		return dst, err
	}
	return s.appendTyped(dst, r)
}

func (s *sbeCodec) appendTyped(dst []byte, r *command.Request) ([]byte, error) {
	if !sbe.Encodable(r.Op) {
		return dst, fmt.Errorf("%w: %s (use proto=resp)", ErrNoSBEEncoding, command.Name(r.Op))
	}
	s.sent++
	r.CorrelationID = s.sent
	if !s.framed && r.Op == command.OpPing && len(r.Key) == 0 && len(r.Value) == 0 && len(r.Args) == 0 {
		return sbe.AppendPing(dst, s.sent), nil // what AppendRequest writes for it, without the flyweight
	}
	// A bare PING goes as the 16-byte Ping message (schema version 1),
	// which fits one cache line and one 64-byte Aeron frame each way.
	r.Compact = true
	if s.framed {
		return sbe.AppendFramed(dst, &s.c, r), nil
	}
	return s.c.AppendRequest(dst, r), nil
}

// translate fills r from a Redis-style argument list. r's slices alias
// args, which outlive the encoding that follows.
func (s *sbeCodec) translate(r *command.Request, args [][]byte) error {
	if !s.dec.Decode(r, args) {
		if s.dec.Status == command.UnknownCommand {
			// Not a goblin command (or subcommand): SBE has no message
			// for it, whatever the server would make of it over RESP.
			return fmt.Errorf("%w: %q (use proto=resp)", ErrNoSBEEncoding, args[0])
		}
		return fmt.Errorf("client: %s", s.dec.Text)
	}
	return nil
}

func (s *sbeCodec) parseReply(buf []byte, r *result) (int, error) {
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
		// The reply to a PING, read and checked in one step: what the
		// general path below makes of the same Pong
		// (TestSBEPongFastPathMatchesGeneral), without filling s.rep.
		if id, ok := sbe.AsPong(buf); ok && id == s.recv+1 {
			s.recv = id
			r.reset()
			r.kind, r.str = KindStatus, txtPong
			return sbe.PingLen, nil
		}
		// Message transports hand over whole messages, so a non-empty
		// buffer starts with a complete one: decoded and measured at once.
		l, err := s.c.DecodeReplyLen(buf, &s.rep)
		if err != nil {
			return 0, fmt.Errorf("%w: %w", ErrProtocol, err)
		}
		n = l
	}
	rep := &s.rep
	if s.framed {
		if err := s.c.DecodeReply(msg, rep); err != nil {
			return 0, fmt.Errorf("%w: %w", ErrProtocol, err)
		}
	}
	if rep.CorrelationID == 0 && rep.Kind == command.Error {
		// The server refused the connection (protected mode, too many
		// clients, a malformed frame) before reading a request, so the
		// refusal answers none: it is the reply to the oldest request
		// outstanding, as the same refusal's -ERR line is over RESP.
		// The server closes the connection after it.
		rep.CorrelationID = s.recv + 1
	}
	if rep.CorrelationID != s.recv+1 {
		return 0, fmt.Errorf("%w: reply correlation id %d, want %d", ErrProtocol, rep.CorrelationID, s.recv+1)
	}
	s.recv++
	r.reset()
	if rep.Status != command.OK || rep.Kind == command.Error {
		r.kind, r.str = KindError, rep.Value
		return n, nil
	}
	// The client reads replies in RESP2's shapes whatever the protocol:
	// maps and sets are arrays, doubles bulk strings, booleans integers.
	if rep.Kind > command.Error || len(rep.Items) > 0 {
		rep.Downgrade() // kinds up to Error are RESP2's already
	}
	if rep.Kind == command.Array {
		used, err := sbeElems(r, rep.Integer, rep.Items, 0)
		if err != nil {
			return 0, err
		}
		if used != len(rep.Items) {
			return 0, fmt.Errorf("%w: %d array items left over", ErrProtocol, len(rep.Items)-used)
		}
		return n, nil
	}
	if err := sbeItem(r, rep.Kind, rep.Integer, rep.Value); err != nil {
		return 0, err
	}
	return n, nil
}

// sbeElems makes r the array of n elements whose items start items (an
// ArrayReply's, flattened in pre-order: a nested array's elements follow
// it) and returns how many items it used.
func sbeElems(r *result, n int64, items []command.Item, depth int) (int, error) {
	if depth > maxDepth {
		return 0, fmt.Errorf("%w: replies nested deeper than %d", ErrProtocol, maxDepth)
	}
	if n < 0 || n > int64(len(items)) {
		return 0, fmt.Errorf("%w: array of %d elements with %d items", ErrProtocol, n, len(items))
	}
	r.kind = KindArray
	if cap(r.elems) < int(n) {
		r.elems = make([]result, n)
	}
	r.elems = r.elems[:n]
	used := 0
	for i := range r.elems {
		if used >= len(items) {
			return 0, fmt.Errorf("%w: array items end early", ErrProtocol)
		}
		it := &items[used]
		used++
		e := &r.elems[i]
		e.reset()
		if it.Kind == command.Array {
			m, err := sbeElems(e, it.Integer, items[used:], depth+1)
			if err != nil {
				return 0, err
			}
			used += m
			continue
		}
		if err := sbeItem(e, it.Kind, it.Integer, it.Value); err != nil {
			return 0, err
		}
	}
	return used, nil
}

func sbeItem(r *result, k command.Kind, n int64, v []byte) error {
	switch k {
	case command.Simple:
		r.kind, r.str = KindStatus, v
	case command.Bulk:
		r.kind, r.str = KindBulk, v
	case command.Nil:
		r.kind = KindNil
	case command.Integer:
		r.kind, r.n = KindInt, n
	case command.Array:
		r.kind = KindArray
	case command.Error:
		r.kind, r.str = KindError, v
	default:
		return fmt.Errorf("%w: unknown reply kind %d", ErrProtocol, k)
	}
	return nil
}
