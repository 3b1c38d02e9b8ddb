package argv

import (
	"testing"

	"github.com/goblin-kv/goblin/command"
)

func words(a ...string) [][]byte {
	out := make([][]byte, len(a))
	for i := range a {
		out[i] = []byte(a[i])
	}
	return out
}

func TestDecode(t *testing.T) {
	var r command.Request
	var d Decoder
	if !d.Decode(&r, words("Set", "k", "v", "nx", "get", "PX", "1500")) {
		t.Fatalf("SET rejected: %s", d.Text)
	}
	if r.Op != command.OpSet || r.Flags != command.FlagNX|command.FlagGet || r.Expiry != command.ExpiryPX || r.Expire != 1500 ||
		string(r.Key) != "k" || string(r.Value) != "v" {
		t.Fatalf("SET decoded to %+v", r)
	}
	if !d.Decode(&r, words("PING", "hi")) || r.Op != command.OpPing || len(r.Args) != 1 || string(r.Args[0]) != "hi" {
		t.Fatalf("PING hi decoded to %+v", r)
	}
	if !d.Decode(&r, words("client", "SETNAME", "x")) || r.Op != command.OpClientSetName || string(r.Value) != "x" {
		t.Fatalf("CLIENT SETNAME decoded to %+v", r)
	}
	for _, c := range []struct {
		args   []string
		op     command.Op
		status command.Status
		text   string
	}{
		{[]string{"GET"}, command.OpGet, command.WrongArgs, "ERR wrong number of arguments for 'get' command"},
		{[]string{"INCRBY", "n", "+5"}, command.OpIncrBy, command.NotInteger, "ERR value is not an integer or out of range"},
		{[]string{"EXPIRE", "k", "x", "NX", "GT"}, command.OpExpire, command.Syntax,
			"ERR NX and XX, GT or LT options at the same time are not compatible"},
		{[]string{"EXPIRE", "k", "5", "BOGUS"}, command.OpExpire, command.Syntax, "ERR Unsupported option BOGUS"},
		{[]string{"SET", "k", "v", "EX", "1", "KEEPTTL"}, command.OpSet, command.Syntax, "ERR syntax error"},
		{[]string{"CONFIG", "NOPE"}, command.OpConfig, command.UnknownCommand, "ERR unknown subcommand 'NOPE'. Try CONFIG HELP."},
		{[]string{"CLIENT"}, command.OpClient, command.WrongArgs, "ERR wrong number of arguments for 'client' command"},
		{[]string{"CLIENT", "SETNAME"}, command.OpClientSetName, command.WrongArgs, "ERR wrong number of arguments for 'client|setname' command"},
		{[]string{"EVAL", "x\r\ny"}, 0, command.UnknownCommand,
			"ERR unknown command 'EVAL', with args beginning with: 'x  y' "},
	} {
		if d.Decode(&r, words(c.args...)) {
			t.Errorf("%q accepted as %+v", c.args, r)
			continue
		}
		if r.Op != c.op || d.Status != c.status || string(d.Text) != c.text {
			t.Errorf("%q: op %d, status %d, %q; want op %d, status %d, %q",
				c.args, r.Op, d.Status, d.Text, c.op, c.status, c.text)
		}
	}
}

// TestEveryCommandDecodes: every command in the table is found by name
// (subcommands through their container) and a call at its minimum arity
// gets past the arity check.
func TestEveryCommandDecodes(t *testing.T) {
	var d Decoder
	var r command.Request
	for _, op := range command.All() {
		s := command.Lookup(op)
		if s.Dispatch {
			continue
		}
		args := words(s.Name)
		if s.Container != command.OpNone {
			c := command.Lookup(s.Container)
			args = words(c.Name, s.Name[len(c.Name)+1:])
		}
		n := s.Arity
		if n < 0 {
			n = -n
		}
		for len(args) < n {
			args = append(args, []byte("1"))
		}
		ok := d.Decode(&r, args)
		if r.Op != op || (!ok && (d.Status == command.WrongArgs || d.Status == command.UnknownCommand)) {
			t.Errorf("%q decoded as op %d (%s), want %d", args, r.Op, d.Text, op)
		}
	}
}

// TestDecodeAllocs: decoding, and failing, allocate nothing once the
// Decoder's buffer has grown.
func TestDecodeAllocs(t *testing.T) {
	good, bad := words("SET", "key", "value", "EX", "10"), words("SET", "k", "v", "BOGUS")
	sub := words("client", "getname")
	var r command.Request
	d := Decoder{Text: make([]byte, 0, 256)}
	if n := testing.AllocsPerRun(100, func() {
		if !d.Decode(&r, good) || d.Decode(&r, bad) || !d.Decode(&r, sub) {
			t.Fatal("unexpected result")
		}
	}); n != 0 {
		t.Fatalf("Decode allocates %v times per run", n)
	}
}

// TestEncodeRoundTrip: encoding a request into words and decoding the
// words gives the request back, for every command the encoder knows.
func TestEncodeRoundTrip(t *testing.T) {
	b := func(s string) []byte { return []byte(s) }
	for _, r := range []command.Request{
		{Op: command.OpPing}, {Op: command.OpPing, Args: words("hi")}, {Op: command.OpEcho, Value: b("x")},
		{Op: command.OpGet, Key: b("k")},
		{Op: command.OpSet, Key: b("k"), Value: b("v"), Flags: command.FlagNX | command.FlagGet, Expiry: command.ExpiryPXAT, Expire: 99},
		{Op: command.OpSet, Key: b("k"), Value: b(""), Flags: command.FlagXX | command.FlagKeepTTL},
		{Op: command.OpDel, Key: b("a"), Args: words("b", "c")}, {Op: command.OpMGet, Key: b("a")},
		{Op: command.OpExpire, Key: b("k"), Amount: -5, Flags: command.FlagGT},
		{Op: command.OpPExpire, Key: b("k"), Amount: 1 << 40, Flags: command.FlagXX | command.FlagLT},
		{Op: command.OpIncrBy, Key: b("n"), Amount: -1 << 63}, {Op: command.OpDecr, Key: b("n")},
		{Op: command.OpMSet, Key: b("a"), Value: b("1"), Args: words("b", "2")}, {Op: command.OpDBSize},
		{Op: command.OpInfo, Args: words("memory")}, {Op: command.OpAuth, Value: b("pw")},
		{Op: command.OpAuth, Key: b("u"), Value: b("pw")}, {Op: command.OpSelect, Amount: 3},
		{Op: command.OpConfigGet, Key: b("max*"), Args: words("save")}, {Op: command.OpClientSetName, Value: b("me")},
		{Op: command.OpClientGetName}, {Op: command.OpCommandCount}, {Op: command.OpCommandList, Amount: ListMatch, Value: b("g*")},
		{Op: command.OpHello, Amount: 2, Flags: command.FlagHelloAuth | command.FlagHelloSetName, Key: b("u"), Value: b("p"), Args: words("n")},
		{Op: command.OpFlushAll}, {Op: command.OpQuit},
		{Op: command.OpSetNX, Key: b("k"), Value: b("v")}, {Op: command.OpSetEX, Key: b("k"), Value: b("v"), Expiry: command.ExpiryEX, Expire: 5},
		{Op: command.OpPSetEX, Key: b("k"), Value: b("v"), Expiry: command.ExpiryPX, Expire: 5},
		{Op: command.OpGetEX, Key: b("k"), Expiry: command.ExpiryPersist}, {Op: command.OpGetEX, Key: b("k"), Expiry: command.ExpiryPXAT, Expire: 77},
		{Op: command.OpGetRange, Key: b("k"), Amount: -3, Amount2: 9}, {Op: command.OpSetRange, Key: b("k"), Amount: 3, Value: b("xy")},
		{Op: command.OpIncrByFloat, Key: b("k"), Value: b("1.5e3")}, {Op: command.OpMSetNX, Key: b("a"), Value: b("1")},
		{Op: command.OpRename, Key: b("a"), Args: words("b")}, {Op: command.OpCopy, Key: b("a"), Args: words("b"), Flags: command.FlagDB | command.FlagReplace, Amount: 3},
		{Op: command.OpCopy, Key: b("a"), Args: words("b")}, {Op: command.OpExpireAt, Key: b("k"), Amount: 1 << 40, Flags: command.FlagNX},
		{Op: command.OpKeys, Value: b("*")}, {Op: command.OpScan, Amount: -1, Amount2: 100, Value: b("a*"), Flags: command.FlagMatch | command.FlagType, Args: words("string")},
		{Op: command.OpScan}, {Op: command.OpObjectEncoding, Key: b("k")}, {Op: command.OpMemoryUsage, Key: b("k")},
		{Op: command.OpRestore, Key: b("k"), Value: b("payload"), Expiry: command.ExpiryPXAT, Expire: 5, Flags: command.FlagReplace},
		{Op: command.OpRestore, Key: b("k"), Value: b("payload")}, {Op: command.OpSwapDB, Amount: 1, Amount2: 2},
		{Op: command.OpMove, Key: b("k"), Amount: 4}, {Op: command.OpRandomKey}, {Op: command.OpDump, Key: b("k")},
		{Op: command.OpSetBit, Key: b("k"), Amount: 77, Amount2: 1}, {Op: command.OpGetBit, Key: b("k"), Amount: 3},
		{Op: command.OpBitCount, Key: b("k")}, {Op: command.OpBitCount, Key: b("k"), Amount: -1, Amount2: 5, Flags: command.FlagStart | command.FlagEnd | command.FlagBit},
		{Op: command.OpBitPos, Key: b("k"), Flags: command.FlagOne}, {Op: command.OpBitPos, Key: b("k"), Amount: 2, Flags: command.FlagStart},
		{Op: command.OpBitPos, Key: b("k"), Amount: 2, Amount2: 9, Flags: command.FlagStart | command.FlagEnd | command.FlagBit},
		{Op: command.OpBitOp, Amount: BitXor, Key: b("d"), Args: words("a", "b")}, {Op: command.OpBitOp, Amount: BitNot, Key: b("d"), Args: words("a")},
		{Op: command.OpBitField, Key: b("k"), Args: [][]byte{
			command.AppendBitFieldOp(nil, command.BitFieldOp{Kind: command.BitGet, Signed: true, Bits: 64, Offset: 3}),
			command.AppendBitFieldOp(nil, command.BitFieldOp{Kind: command.BitIncrBy, Bits: 7, Overflow: command.BitSat, Offset: 100, Value: -5}),
			command.AppendBitFieldOp(nil, command.BitFieldOp{Kind: command.BitSet, Bits: 1, Overflow: command.BitFail, Value: 1})}},
		{Op: command.OpBitFieldRO, Key: b("k"), Args: [][]byte{command.AppendBitFieldOp(nil, command.BitFieldOp{Bits: 8})}},
		{Op: command.OpLCS, Key: b("a"), Args: words("b"), Flags: command.FlagIdx | command.FlagWithMatchLen, Amount: 3},
		{Op: command.OpLCS, Key: b("a"), Args: words("b"), Flags: command.FlagLen},
	} {
		var e Encoder
		w, err := e.Words(&r)
		if err != nil {
			t.Fatalf("%+v: %v", r, err)
		}
		var d Decoder
		var got command.Request
		if !d.Decode(&got, w) {
			t.Fatalf("%q: %s", w, d.Text)
		}
		if !sameRequest(&got, &r) {
			t.Errorf("%q decoded to\n%+v\nwant\n%+v", w, got, r)
		}
	}
}

func sameRequest(a, b *command.Request) bool {
	eqb := func(x, y []byte) bool { return string(x) == string(y) }
	if a.Op != b.Op || a.Flags != b.Flags || a.Expiry != b.Expiry || a.Expire != b.Expire || a.Amount != b.Amount || a.Amount2 != b.Amount2 ||
		!eqb(a.Key, b.Key) || !eqb(a.Value, b.Value) || len(a.Args) != len(b.Args) {
		return false
	}
	for i := range a.Args {
		if !eqb(a.Args[i], b.Args[i]) {
			return false
		}
	}
	return true
}
