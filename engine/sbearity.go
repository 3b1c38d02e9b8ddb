package engine

import (
	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto/argv"
)

// sbeMinArgs is, per Op, the fewest elements an SBE request's Args must
// hold for the command's arity (command.Spec.Arity) to be met. RESP's
// decoder checks arity on the words; an SBE request carries its words in
// typed fields (Key, Value, Amount, ...) and Args, so a message can name
// an op that needs, say, a second key and carry none, and the handler's
// r.Args[0] would be out of range. serveSBEReply answers such a request
// with Redis's wrong-number-of-arguments error instead, before anything
// runs or is queued in MULTI.
//
// The bound is computed from argv.Encoder, the one place that knows how
// each op's fields become words: the words the typed fields make without
// Args and without option flags (Key and Value set, Amount 0: a positive
// Amount adds optional words, LCS's MINMATCHLEN) are taken away from the arity's minimum. Option flags (LCS's
// LEN, SET's NX, ...) add optional words only, never the positional ones
// handlers index, so they are not counted; the one flag that selects a
// form whose words come from Value instead of Args, CLIENT KILL's
// FlagKillAddr, exempts its op.
var sbeMinArgs [command.NumOps]uint8

func init() {
	var enc argv.Encoder
	v := []byte("v")
	for _, op := range command.All() {
		need := command.Lookup(op).Arity
		if need < 0 {
			need = -need
		}
		r := command.Request{Op: op, Key: v, Value: v}
		if words, err := enc.Words(&r); err == nil && need > len(words) {
			sbeMinArgs[op] = uint8(min(need-len(words), 255))
		}
	}
	sbeMinArgs[command.OpClientKill] = 0 // ADDR in Value (FlagKillAddr), or filters in Args its handler checks
}

// sbeArityOK reports whether r, an SBE request, carries enough arguments
// for its command; if not it leaves Redis's error in e.res and, inside
// MULTI, marks the transaction aborted as RESP's rejection does.
func (e *Engine) sbeArityOK(s *Session, r *command.Request) bool {
	if len(r.Args) >= int(sbeMinArgs[r.Op]) {
		return true
	}
	e.wrongArgs(r.Op)
	if s.tx.on {
		s.tx.abort = true
	}
	return false
}
