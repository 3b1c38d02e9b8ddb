package command

import (
	"github.com/goblin-kv/goblin/command/parse"
	"github.com/goblin-kv/goblin/proto/sbe"
)

// decodeRESP turns the arguments of one RESP command into r with
// parse.Decode, the command syntax the Go client's SBE translation shares.
// When the command is unknown or malformed it records the error reply in
// e.res and returns false; nothing is executed then.
func (e *Engine) decodeRESP(args [][]byte, r *Request) bool {
	e.resetResult()
	f := parse.Failure{Text: e.errBuf[:0]}
	ok := parse.Decode(r, args, &f)
	e.errBuf = f.Text // keep the grown buffer for the next error
	if !ok {
		e.setError(f.Status, e.errBuf)
	}
	return ok
}

// equalFold reports whether b equals the lower-case ASCII word s, ignoring
// case.
func equalFold(b []byte, s string) bool { return parse.EqualFold(b, s) }

func (e *Engine) wrongArgs(op Op) bool {
	e.errBuf = parse.AppendWrongArgs(e.errBuf[:0], OpName(op))
	e.setError(sbe.StatusWrongArgs, e.errBuf)
	return false
}

// fail records an error reply whose text is prefix + arg + suffix.
func (e *Engine) fail(st sbe.Status, prefix string, arg []byte, suffix string) bool {
	e.errBuf = append(e.errBuf[:0], prefix...)
	e.errBuf = parse.AppendSanitized(e.errBuf, arg, 128)
	e.errBuf = append(e.errBuf, suffix...)
	e.setError(st, e.errBuf)
	return false
}
