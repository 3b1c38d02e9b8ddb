package engine

import (
	"strconv"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto/resp"
)

// encodeRESP appends e.res in the session's RESP version: RESP3 kinds as
// themselves for a client that said HELLO 3, in their RESP2 forms
// otherwise.
func (e *Engine) encodeRESP(out []byte, resp3 bool) []byte {
	r := &e.res
	switch r.Kind { // the common answers first, without a call
	case command.Simple:
		out = append(out, '+')
		out = append(out, r.Value...)
		return append(out, '\r', '\n')
	case command.Bulk:
		return resp.AppendBulk(out, r.Value)
	case command.Error:
		out = append(out, '-')
		out = append(out, r.Value...)
		return append(out, '\r', '\n')
	}
	out = appendItem(out, r.Kind, r.Integer, r.Value, resp3)
	for i := range r.Items {
		it := &r.Items[i]
		out = appendItem(out, it.Kind, it.Integer, it.Value, resp3)
	}
	return out
}

// appendItem appends one element; an aggregate's elements follow it.
func appendItem(out []byte, k command.Kind, n int64, v []byte, resp3 bool) []byte {
	switch k {
	case command.Simple:
		out = append(out, '+')
		out = append(out, v...)
		return append(out, '\r', '\n')
	case command.Error:
		out = append(out, '-')
		out = append(out, v...)
		return append(out, '\r', '\n')
	case command.Bulk:
		return resp.AppendBulk(out, v)
	case command.Integer:
		return resp.AppendInt(out, n)
	case command.Array:
		return resp.AppendArray(out, int(n))
	case command.Map:
		if resp3 {
			return resp.AppendMap(out, int(n))
		}
		return resp.AppendArray(out, int(2*n))
	case command.Set:
		if resp3 {
			return resp.AppendSet(out, int(n))
		}
		return resp.AppendArray(out, int(n))
	case command.Double:
		if resp3 {
			return resp.AppendDouble(out, v)
		}
		return resp.AppendBulk(out, v)
	case command.Boolean:
		if resp3 {
			return resp.AppendBool(out, n != 0)
		}
		return resp.AppendInt(out, n)
	case command.Verbatim:
		if resp3 {
			return resp.AppendVerbatim(out, v)
		}
		return resp.AppendBulk(out, v)
	case command.NilArray:
		if resp3 {
			return resp.AppendNull3(out)
		}
		return resp.AppendNullArray(out)
	}
	if resp3 {
		return resp.AppendNull3(out)
	}
	return resp.AppendNull(out)
}

// maxSBEItems is the most elements an SBE ArrayReply carries (its group's
// count is 16 bits, one value kept as the schema's null).
const maxSBEItems = 65534

// serveSBE executes the SBE request decoded into e.req from msg (or queues
// it, inside MULTI) and appends its reply, SOFH-framed or bare.
func (e *Engine) serveSBE(s *Session, msg, out []byte, framed bool) []byte {
	out = e.serveSBEReply(s, msg, out, framed)
	if len(e.blocked) != 0 { // the clients blocked on keys it filled
		e.serveBlocked()
	}
	return out
}

func (e *Engine) serveSBEReply(s *Session, msg, out []byte, framed bool) []byte {
	r := &e.req
	e.startRequest()
	// The rare cases (a version 1 message, MULTI) and the reply's rare
	// adjustments are out of line, each behind one test, so that this
	// function stays small: what the common request pays is the tests.
	switch {
	case !e.sbeArityOK(s, r): // too few arguments for the op: refused, as RESP's decoder does
	case r.Version < 2 || s.tx.on:
		e.serveSBERare(s, msg)
	default:
		e.execute(s, r)
	}
	if len(e.monitors) > 0 && e.ran {
		e.feedMonitors(s, r, nil)
	}
	e.count(s, r.Op)
	if s.mute != 0 { // CLIENT REPLY OFF or SKIP
		return e.muted(s, out)
	}
	if r.Version < 2 || len(e.res.Items) > maxSBEItems {
		e.fitSBEReply(r.Version)
	}
	e.res.CorrelationID = r.CorrelationID
	// A Ping is answered with a Pong; the codec falls back to a Reply when
	// the answer is not PONG (a refusal before AUTH, say).
	e.res.Compact = r.Compact
	if framed {
		return e.codec.AppendFramedReply(out, &e.res)
	}
	return e.codec.AppendReply(out, &e.res)
}

// serveSBERare executes e.req, a message of schema version 1 or one that
// arrived inside MULTI.
func (e *Engine) serveSBERare(s *Session, msg []byte) {
	r := &e.req
	switch {
	case r.Version < 2 && r.Op > command.OpClientGetName:
		// An op of version 2 in a version 1 message: a client that cannot
		// read the reply kinds the command may answer with.
		e.errBuf = append(e.errBuf[:0], "ERR op "...)
		e.errBuf = strconv.AppendUint(e.errBuf, uint64(r.Op), 10)
		e.errBuf = append(e.errBuf, " needs SBE schema version 2 or later; the request is version "...)
		e.errBuf = strconv.AppendUint(e.errBuf, uint64(r.Version), 10)
		e.setError(command.UnsupportedVersion, e.errBuf)
	case !s.tx.on || !e.queued(s, r, false, nil, msg):
		e.execute(s, r)
	}
}

// fitSBEReply makes e.res one an SBE client of schema version can read:
// an error for more elements than a reply holds, and for a client of
// version 1 the reply kinds and statuses it knows (RESP2's shapes; the
// statuses of version 2 as err).
func (e *Engine) fitSBEReply(version uint16) {
	if len(e.res.Items) > maxSBEItems {
		e.errText(command.Err, "ERR reply too large for SBE: more than 65534 elements")
	}
	if version < 2 {
		e.res.Downgrade()
		if e.res.Status > command.UnsupportedVersion {
			e.res.Status = command.Err
		}
	}
}

func (e *Engine) respProtocolError(s *Session, out []byte, err error) []byte {
	s.protoErr = err
	s.Stats.ProtocolErrors++
	s.Stats.Errors++
	out = append(out, "-ERR "...)
	out = append(out, err.Error()...)
	return append(out, '\r', '\n')
}

// sbeProtocolError answers a malformed SBE request with a Reply of status
// protocol (correlation id 0: the request's could not be trusted).
func (e *Engine) sbeProtocolError(s *Session, out []byte, err error, framed bool) []byte {
	s.protoErr = err
	s.Stats.ProtocolErrors++
	s.Stats.Errors++
	e.errBuf = append(e.errBuf[:0], "ERR Protocol error: "...)
	e.errBuf = append(e.errBuf, err.Error()...)
	rep := command.Reply{Status: command.Protocol, Kind: command.Error, Value: e.errBuf}
	if !framed {
		return e.codec.AppendReply(out, &rep)
	}
	return e.codec.AppendFramedReply(out, &rep)
}
