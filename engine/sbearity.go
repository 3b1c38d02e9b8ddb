package engine

import (
	"strings"

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
// The bound is computed from argv.Decoder, the one place that knows how
// each op's words become fields: the command's name words (CLUSTER
// KEYSLOT is two) padded with "1"s to the arity's minimum are decoded,
// and the Args that shortest well-formed request carries are the bound.
// Words the decoder puts in Key, Value or Amount (CLUSTER KEYSLOT's key
// goes in Value) are not counted, so a request a client built by the same
// decoder is never refused. An op whose padded minimum does not decode
// (an argument must be a keyword) gets no bound; CLIENT KILL is exempt,
// its ADDR form carries the address in Value (FlagKillAddr).
var sbeMinArgs [command.NumOps]uint8

func init() {
	var dec argv.Decoder
	var r command.Request
	for _, op := range command.All() {
		spec := command.Lookup(op)
		need := spec.Arity
		if need < 0 {
			need = -need
		}
		words := [][]byte{}
		for _, w := range strings.Split(spec.Name, "|") {
			words = append(words, []byte(w))
		}
		for len(words) < need {
			words = append(words, []byte("1"))
		}
		if dec.Decode(&r, words) && r.Op == op {
			sbeMinArgs[op] = uint8(min(len(r.Args), 255))
		}
	}
	sbeMinArgs[command.OpClientKill] = 0
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
