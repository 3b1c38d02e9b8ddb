package argv

import (
	"testing"

	"github.com/goblin-kv/goblin/reply"
	"github.com/goblin-kv/goblin/request"
)

func words(a ...string) [][]byte {
	out := make([][]byte, len(a))
	for i := range a {
		out[i] = []byte(a[i])
	}
	return out
}

func TestDecode(t *testing.T) {
	var r request.Request
	var d Decoder
	if !d.Decode(&r, words("Set", "k", "v", "nx", "get", "PX", "1500")) {
		t.Fatalf("SET rejected: %s", d.Text)
	}
	if r.Op != request.OpSet || r.Flags != request.FlagNX|request.FlagGet || r.Expiry != request.ExpiryPX || r.Expire != 1500 ||
		string(r.Key) != "k" || string(r.Value) != "v" {
		t.Fatalf("SET decoded to %+v", r)
	}
	if !d.Decode(&r, words("PING", "hi")) || r.Op != request.OpPing || len(r.Args) != 1 || string(r.Args[0]) != "hi" {
		t.Fatalf("PING hi decoded to %+v", r)
	}
	if !d.Decode(&r, words("client", "SETNAME", "x")) || r.Op != request.OpClientSetName || string(r.Value) != "x" {
		t.Fatalf("CLIENT SETNAME decoded to %+v", r)
	}
	for _, c := range []struct {
		args   []string
		op     request.Op
		status reply.Status
		text   string
	}{
		{[]string{"GET"}, request.OpGet, reply.WrongArgs, "ERR wrong number of arguments for 'get' command"},
		{[]string{"INCRBY", "n", "+5"}, request.OpIncrBy, reply.NotInteger, "ERR value is not an integer or out of range"},
		{[]string{"EXPIRE", "k", "x", "NX", "GT"}, request.OpExpire, reply.Syntax,
			"ERR NX and XX, GT or LT options at the same time are not compatible"},
		{[]string{"EXPIRE", "k", "5", "BOGUS"}, request.OpExpire, reply.Syntax, "ERR Unsupported option BOGUS"},
		{[]string{"SET", "k", "v", "EX", "1", "KEEPTTL"}, request.OpSet, reply.Syntax, "ERR syntax error"},
		{[]string{"CONFIG", "NOPE"}, request.OpConfig, reply.UnknownCommand, "ERR unknown subcommand 'NOPE'. Try CONFIG HELP."},
		{[]string{"CLIENT"}, request.OpClient, reply.WrongArgs, "ERR wrong number of arguments for 'client' command"},
		{[]string{"CLIENT", "SETNAME"}, request.OpClientSetName, reply.WrongArgs, "ERR wrong number of arguments for 'client|setname' command"},
		{[]string{"EVAL", "x\r\ny"}, 0, reply.UnknownCommand,
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
	var r request.Request
	for _, op := range request.All() {
		s := request.Lookup(op)
		if s.Dispatch {
			continue
		}
		args := words(s.Name)
		if s.Container != request.OpNone {
			c := request.Lookup(s.Container)
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
		if r.Op != op || (!ok && (d.Status == reply.WrongArgs || d.Status == reply.UnknownCommand)) {
			t.Errorf("%q decoded as op %d (%s), want %d", args, r.Op, d.Text, op)
		}
	}
}

// TestDecodeAllocs: decoding, and failing, allocate nothing once the
// Decoder's buffer has grown.
func TestDecodeAllocs(t *testing.T) {
	good, bad := words("SET", "key", "value", "EX", "10"), words("SET", "k", "v", "BOGUS")
	sub := words("client", "getname")
	var r request.Request
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
	for _, r := range []request.Request{
		{Op: request.OpPing}, {Op: request.OpPing, Args: words("hi")}, {Op: request.OpEcho, Value: b("x")},
		{Op: request.OpGet, Key: b("k")},
		{Op: request.OpSet, Key: b("k"), Value: b("v"), Flags: request.FlagNX | request.FlagGet, Expiry: request.ExpiryPXAT, Expire: 99},
		{Op: request.OpSet, Key: b("k"), Value: b(""), Flags: request.FlagXX | request.FlagKeepTTL},
		{Op: request.OpDel, Key: b("a"), Args: words("b", "c")}, {Op: request.OpMGet, Key: b("a")},
		{Op: request.OpExpire, Key: b("k"), Amount: -5, Flags: request.FlagGT},
		{Op: request.OpPExpire, Key: b("k"), Amount: 1 << 40, Flags: request.FlagXX | request.FlagLT},
		{Op: request.OpIncrBy, Key: b("n"), Amount: -1 << 63}, {Op: request.OpDecr, Key: b("n")},
		{Op: request.OpMSet, Key: b("a"), Value: b("1"), Args: words("b", "2")}, {Op: request.OpDBSize},
		{Op: request.OpInfo, Args: words("memory")}, {Op: request.OpAuth, Value: b("pw")},
		{Op: request.OpAuth, Key: b("u"), Value: b("pw")}, {Op: request.OpSelect, Amount: 3},
		{Op: request.OpConfigGet, Key: b("max*"), Args: words("save")}, {Op: request.OpClientSetName, Value: b("me")},
		{Op: request.OpClientGetName}, {Op: request.OpCommandCount}, {Op: request.OpCommandList, Amount: ListMatch, Value: b("g*")},
		{Op: request.OpHello, Amount: 2, Flags: request.FlagHelloAuth | request.FlagHelloSetName, Key: b("u"), Value: b("p"), Args: words("n")},
		{Op: request.OpFlushAll}, {Op: request.OpQuit},
		{Op: request.OpSetNX, Key: b("k"), Value: b("v")}, {Op: request.OpSetEX, Key: b("k"), Value: b("v"), Expiry: request.ExpiryEX, Expire: 5},
		{Op: request.OpPSetEX, Key: b("k"), Value: b("v"), Expiry: request.ExpiryPX, Expire: 5},
		{Op: request.OpGetEX, Key: b("k"), Expiry: request.ExpiryPersist}, {Op: request.OpGetEX, Key: b("k"), Expiry: request.ExpiryPXAT, Expire: 77},
		{Op: request.OpGetRange, Key: b("k"), Amount: -3, Amount2: 9}, {Op: request.OpSetRange, Key: b("k"), Amount: 3, Value: b("xy")},
		{Op: request.OpIncrByFloat, Key: b("k"), Value: b("1.5e3")}, {Op: request.OpMSetNX, Key: b("a"), Value: b("1")},
		{Op: request.OpRename, Key: b("a"), Args: words("b")}, {Op: request.OpCopy, Key: b("a"), Args: words("b"), Flags: request.FlagDB | request.FlagReplace, Amount: 3},
		{Op: request.OpCopy, Key: b("a"), Args: words("b")}, {Op: request.OpExpireAt, Key: b("k"), Amount: 1 << 40, Flags: request.FlagNX},
		{Op: request.OpKeys, Value: b("*")}, {Op: request.OpScan, Amount: -1, Amount2: 100, Value: b("a*"), Flags: request.FlagMatch | request.FlagType, Args: words("string")},
		{Op: request.OpScan}, {Op: request.OpObjectEncoding, Key: b("k")}, {Op: request.OpMemoryUsage, Key: b("k")},
		{Op: request.OpRestore, Key: b("k"), Value: b("payload"), Expiry: request.ExpiryPXAT, Expire: 5, Flags: request.FlagReplace},
		{Op: request.OpRestore, Key: b("k"), Value: b("payload")}, {Op: request.OpSwapDB, Amount: 1, Amount2: 2},
		{Op: request.OpMove, Key: b("k"), Amount: 4}, {Op: request.OpRandomKey}, {Op: request.OpDump, Key: b("k")},
		{Op: request.OpSetBit, Key: b("k"), Amount: 77, Amount2: 1}, {Op: request.OpGetBit, Key: b("k"), Amount: 3},
		{Op: request.OpBitCount, Key: b("k")}, {Op: request.OpBitCount, Key: b("k"), Amount: -1, Amount2: 5, Flags: request.FlagStart | request.FlagEnd | request.FlagBit},
		{Op: request.OpBitPos, Key: b("k"), Flags: request.FlagOne}, {Op: request.OpBitPos, Key: b("k"), Amount: 2, Flags: request.FlagStart},
		{Op: request.OpBitPos, Key: b("k"), Amount: 2, Amount2: 9, Flags: request.FlagStart | request.FlagEnd | request.FlagBit},
		{Op: request.OpBitOp, Amount: BitXor, Key: b("d"), Args: words("a", "b")}, {Op: request.OpBitOp, Amount: BitNot, Key: b("d"), Args: words("a")},
		{Op: request.OpBitField, Key: b("k"), Args: [][]byte{
			request.AppendBitFieldOp(nil, request.BitFieldOp{Kind: request.BitGet, Signed: true, Bits: 64, Offset: 3}),
			request.AppendBitFieldOp(nil, request.BitFieldOp{Kind: request.BitIncrBy, Bits: 7, Overflow: request.BitSat, Offset: 100, Value: -5}),
			request.AppendBitFieldOp(nil, request.BitFieldOp{Kind: request.BitSet, Bits: 1, Overflow: request.BitFail, Value: 1})}},
		{Op: request.OpBitFieldRO, Key: b("k"), Args: [][]byte{request.AppendBitFieldOp(nil, request.BitFieldOp{Bits: 8})}},
		{Op: request.OpLCS, Key: b("a"), Args: words("b"), Flags: request.FlagIdx | request.FlagWithMatchLen, Amount: 3},
		{Op: request.OpLCS, Key: b("a"), Args: words("b"), Flags: request.FlagLen},
	} {
		var e Encoder
		w, err := e.Words(&r)
		if err != nil {
			t.Fatalf("%+v: %v", r, err)
		}
		var d Decoder
		var got request.Request
		if !d.Decode(&got, w) {
			t.Fatalf("%q: %s", w, d.Text)
		}
		if !sameRequest(&got, &r) {
			t.Errorf("%q decoded to\n%+v\nwant\n%+v", w, got, r)
		}
	}
}

func sameRequest(a, b *request.Request) bool {
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
