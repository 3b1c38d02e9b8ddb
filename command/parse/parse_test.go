package parse

import (
	"testing"

	"github.com/goblin-kv/goblin/proto/sbe"
)

func words(a ...string) [][]byte {
	out := make([][]byte, len(a))
	for i := range a {
		out[i] = []byte(a[i])
	}
	return out
}

func TestDecode(t *testing.T) {
	var r sbe.Request
	var f Failure
	if !Decode(&r, words("Set", "k", "v", "nx", "get", "PX", "1500"), &f) {
		t.Fatalf("SET rejected: %s", f.Text)
	}
	if r.Op != sbe.OpSet || r.Flags != sbe.FlagNX|sbe.FlagGet || r.Expiry != sbe.ExpiryPX || r.Expire != 1500 ||
		string(r.Key) != "k" || string(r.Value) != "v" {
		t.Fatalf("SET decoded to %+v", r)
	}
	if !Decode(&r, words("PING", "hi"), &f) || r.Op != sbe.OpPing || len(r.Args) != 1 || string(r.Args[0]) != "hi" {
		t.Fatalf("PING hi decoded to %+v", r)
	}
	for _, c := range []struct {
		args   []string
		op     sbe.Op
		status sbe.Status
		text   string
	}{
		{[]string{"GET"}, sbe.OpGet, sbe.StatusWrongArgs, "ERR wrong number of arguments for 'get' command"},
		{[]string{"INCRBY", "n", "+5"}, sbe.OpIncrBy, sbe.StatusNotInteger, "ERR value is not an integer or out of range"},
		{[]string{"EXPIRE", "k", "x", "NX", "GT"}, sbe.OpExpire, sbe.StatusSyntax,
			"ERR NX and XX, GT or LT options at the same time are not compatible"},
		{[]string{"EXPIRE", "k", "5", "BOGUS"}, sbe.OpExpire, sbe.StatusSyntax, "ERR Unsupported option BOGUS"},
		{[]string{"SET", "k", "v", "EX", "1", "KEEPTTL"}, sbe.OpSet, sbe.StatusSyntax, "ERR syntax error"},
		{[]string{"CONFIG", "SET"}, 0, sbe.StatusUnknownCommand, "ERR unknown subcommand 'SET'. Try CONFIG HELP."},
		{[]string{"EVAL", "x\r\ny"}, 0, sbe.StatusUnknownCommand,
			"ERR unknown command 'EVAL', with args beginning with: 'x  y' "},
	} {
		if Decode(&r, words(c.args...), &f) {
			t.Errorf("%q accepted as %+v", c.args, r)
			continue
		}
		if r.Op != c.op || f.Status != c.status || string(f.Text) != c.text {
			t.Errorf("%q: op %d, status %d, %q; want op %d, status %d, %q",
				c.args, r.Op, f.Status, f.Text, c.op, c.status, c.text)
		}
	}
}

// TestDecodeAllocs: decoding, and failing, allocate nothing once the
// Failure buffer has grown.
func TestDecodeAllocs(t *testing.T) {
	good, bad := words("SET", "key", "value", "EX", "10"), words("SET", "k", "v", "BOGUS")
	var r sbe.Request
	f := Failure{Text: make([]byte, 0, 256)}
	if n := testing.AllocsPerRun(100, func() {
		if !Decode(&r, good, &f) || Decode(&r, bad, &f) {
			t.Fatal("unexpected result")
		}
	}); n != 0 {
		t.Fatalf("Decode allocates %v times per run", n)
	}
}
