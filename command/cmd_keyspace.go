package command

import (
	"math"

	"github.com/goblin-kv/goblin/proto/argv"
	"github.com/goblin-kv/goblin/reply"
	"github.com/goblin-kv/goblin/request"
)

func (e *Engine) del(_ *Session, r *request.Request) {
	n := b2i(e.st.Del(r.Key))
	for _, k := range r.Args {
		n += b2i(e.st.Del(k))
	}
	e.integer(n)
}

func (e *Engine) exists(_ *Session, r *request.Request) {
	n := b2i(e.st.Exists(r.Key))
	for _, k := range r.Args {
		n += b2i(e.st.Exists(k))
	}
	e.integer(n)
}

func (e *Engine) ttl(_ *Session, r *request.Request) {
	ms := e.st.PTTL(r.Key)
	if ms >= 0 && r.Op == request.OpTTL {
		ms = (ms + 500) / 1000
	}
	e.integer(ms)
}

func (e *Engine) persist(_ *Session, r *request.Request) { e.integer(b2i(e.st.Persist(r.Key))) }

func (e *Engine) keyType(_ *Session, r *request.Request) {
	if e.st.Exists(r.Key) {
		e.simple(txtString)
	} else {
		e.simple(txtNone)
	}
}

func (e *Engine) dbsize(*Session, *request.Request) { e.integer(int64(e.st.Len())) }

func (e *Engine) flush(*Session, *request.Request) {
	e.st.Flush()
	e.ok()
}

// expire answers EXPIRE/PEXPIRE key time [NX|XX|GT|LT] as Redis 7 does.
func (e *Engine) expire(_ *Session, r *request.Request) {
	if r.Flags&^(request.FlagNX|request.FlagXX|request.FlagGT|request.FlagLT) != 0 {
		e.errText(reply.Syntax, "ERR syntax error")
		return
	}
	if text := argv.ExpireFlagsError(r.Flags); text != "" {
		e.errText(reply.Syntax, text)
		return
	}
	when := r.Amount
	now := e.clock.NowMillis()
	if (r.Op == request.OpExpire && (when > math.MaxInt64/1000 || when < math.MinInt64/1000)) ||
		(r.Op == request.OpExpire && when*1000 > math.MaxInt64-now) || (r.Op == request.OpPExpire && when > math.MaxInt64-now) {
		e.fail(reply.InvalidExpire, "ERR invalid expire time in '", bs(request.Name(r.Op)), "' command")
		return
	}
	if r.Op == request.OpExpire {
		when *= 1000
	}
	when += now
	if r.Flags != 0 {
		left := e.st.PTTL(r.Key)
		if left == -2 {
			e.integer(0)
			return
		}
		current := int64(-1) // no expiry
		if left >= 0 {
			current = now + left
		}
		if (r.Flags&request.FlagNX != 0 && current != -1) ||
			(r.Flags&request.FlagXX != 0 && current == -1) ||
			(r.Flags&request.FlagGT != 0 && (current == -1 || when <= current)) ||
			(r.Flags&request.FlagLT != 0 && current != -1 && when >= current) {
			e.integer(0)
			return
		}
	}
	e.integer(b2i(e.st.ExpireAt(r.Key, when)))
}
