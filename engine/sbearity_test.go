package engine

import (
	"testing"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/sbe"
)

// TestSBEArityRefused: an SBE request whose op needs more arguments than
// it carries (LCS or RENAME with no second key) is answered with Redis's
// wrong-number-of-arguments error, counted as rejected, and runs nothing;
// with the arguments it runs; inside MULTI the refusal aborts the
// transaction as RESP's does.
func TestSBEArityRefused(t *testing.T) {
	e, _ := newEngine(t, Options{})
	s := NewSession(proto.SBE, nil)
	var c sbe.Codec
	serve := func(r command.Request) command.Reply {
		t.Helper()
		r.CorrelationID = 5
		out, _ := e.ServeMessage(s, c.AppendRequest(nil, &r), nil)
		var rep command.Reply
		if err := c.DecodeReply(out, &rep); err != nil {
			t.Fatalf("reply %q: %v", out, err)
		}
		return rep
	}
	if sbeMinArgs[command.OpLCS] != 1 || sbeMinArgs[command.OpRename] != 1 || sbeMinArgs[command.OpGet] != 0 || sbeMinArgs[command.OpSet] != 0 {
		t.Fatalf("minimum Args: LCS %d RENAME %d GET %d SET %d, want 1 1 0 0", sbeMinArgs[command.OpLCS],
			sbeMinArgs[command.OpRename], sbeMinArgs[command.OpGet], sbeMinArgs[command.OpSet])
	}
	serve(command.Request{Op: command.OpSet, Key: []byte("a"), Value: []byte("v")})
	for _, tc := range []struct {
		op   command.Op
		want string
	}{{command.OpLCS, "ERR wrong number of arguments for 'lcs' command"}, {command.OpRename, "ERR wrong number of arguments for 'rename' command"}} {
		rep := serve(command.Request{Op: tc.op, Key: []byte("a"), Flags: command.FlagLen})
		if rep.Kind != command.Error || string(rep.Value) != tc.want {
			t.Errorf("%s without its second key: %v %q, want error %q", command.Name(tc.op), rep.Kind, rep.Value, tc.want)
		}
		if e.cmd[tc.op].rejected != 1 || e.cmd[tc.op].calls != 0 {
			t.Errorf("%s: rejected %d calls %d, want 1 0", command.Name(tc.op), e.cmd[tc.op].rejected, e.cmd[tc.op].calls)
		}
	}
	if rep := serve(command.Request{Op: command.OpRename, Key: []byte("a"), Args: [][]byte{[]byte("b")}}); rep.Kind != command.Simple {
		t.Errorf("RENAME a b: %v %q, want OK", rep.Kind, rep.Value)
	}
	serve(command.Request{Op: command.OpMulti})
	serve(command.Request{Op: command.OpLCS, Key: []byte("b")})
	if rep := serve(command.Request{Op: command.OpExec}); rep.Kind != command.Error || rep.Status != command.ExecAbort {
		t.Errorf("EXEC after a refused LCS: %v %v %q, want EXECABORT", rep.Kind, rep.Status, rep.Value)
	}
}
