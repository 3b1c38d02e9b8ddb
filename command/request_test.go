package command

import (
	"reflect"
	"strings"
	"testing"
)

func TestUsage(t *testing.T) {
	for op, want := range map[Op]string{
		OpSet:           "SET key value [NX|XX] [GET] [EX seconds|PX milliseconds|EXAT unix-time-seconds|PXAT unix-time-milliseconds|KEEPTTL]",
		OpDel:           "DEL key [key ...]",
		OpMSet:          "MSET key value [key value ...]",
		OpInfo:          "INFO [section [section ...]]",
		OpHello:         "HELLO [protover [AUTH username password] [SETNAME clientname]]",
		OpCommandList:   "COMMAND LIST [FILTERBY (MODULE module-name|ACLCAT category|PATTERN pattern)]",
		OpClientSetInfo: "CLIENT SETINFO (LIB-NAME libname|LIB-VER libver)",
		OpDBSize:        "DBSIZE",
	} {
		if got := Lookup(op).Usage(); got != want {
			t.Errorf("usage of %s:\n got %s\nwant %s", Name(op), got, want)
		}
	}
}

func TestSyntaxTree(t *testing.T) {
	args, err := ParseSyntax("key [condition=NX|XX] [EX seconds] (data=key value)...")
	if err != nil {
		t.Fatal(err)
	}
	want := []Arg{
		{Name: "key", Type: "key", KeySpec: 0},
		{Name: "condition", Type: "oneof", Optional: true, Args: []Arg{
			{Name: "nx", Type: "pure-token", Token: "NX"}, {Name: "xx", Type: "pure-token", Token: "XX"}}},
		{Name: "seconds", Type: "integer", Token: "EX", Optional: true},
		{Name: "data", Type: "block", Multiple: true, Args: []Arg{
			{Name: "key", Type: "key", KeySpec: 1}, {Name: "value", Type: "string"}}},
	}
	if !reflect.DeepEqual(args, want) {
		t.Fatalf("got  %+v\nwant %+v", args, want)
	}
	for _, bad := range []string{"[a", "a)", "(b|", "x ]"} {
		if _, err := ParseSyntax(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestLookup(t *testing.T) {
	if ByName([]byte("GeT")) != OpGet || ByName([]byte("nope")) != OpNone || ByName([]byte("client|getname")) != OpNone {
		t.Fatal("ByName")
	}
	if Subcommand(OpClient, []byte("SetName")) != OpClientSetName || Subcommand(OpConfig, []byte("setname")) != OpNone {
		t.Fatal("Subcommand")
	}
	if ByFullName("CLIENT|GETNAME") != OpClientGetName {
		t.Fatal("ByFullName")
	}
	if n := testing.AllocsPerRun(100, func() { ByName([]byte("incrby")); Subcommand(OpClient, []byte("getname")) }); n != 0 {
		t.Fatalf("lookups allocate %v times", n)
	}
}

// TestLegacyRange checks the first/last/step derivation on the shapes
// Redis derives them for: one spec, a stepped spec, several consecutive
// specs and a spec to the end.
func TestLegacyRange(t *testing.T) {
	for _, c := range []struct {
		keys             []KeySpec
		first, last, stp int
	}{
		{nil, 0, 0, 0},
		{[]KeySpec{{Index: 1, KeyStep: 1}}, 1, 1, 1},
		{[]KeySpec{{Index: 1, LastKey: -1, KeyStep: 2}}, 1, -1, 2},
		{[]KeySpec{{Index: 1, KeyStep: 1}, {Index: 2, KeyStep: 1}}, 1, 2, 1},               // COPY, RENAME
		{[]KeySpec{{Index: 2, KeyStep: 1}, {Index: 3, LastKey: -1, KeyStep: 1}}, 2, -1, 1}, // BITOP
		{[]KeySpec{{Index: 1, KeyStep: 1}, {Index: 4, KeyStep: 1}}, 1, 1, 1},               // not consecutive: second ignored
	} {
		s := Spec{Keys: c.keys}
		if f, l, st := s.Legacy(); f != c.first || l != c.last || st != c.stp {
			t.Errorf("%+v: got %d %d %d, want %d %d %d", c.keys, f, l, st, c.first, c.last, c.stp)
		}
	}
}

func TestKeyPositions(t *testing.T) {
	mset := Lookup(OpMSet)
	if got, ok := mset.KeyPositions(nil, 5, nil); !ok || !reflect.DeepEqual(got, []int{1, 3}) {
		t.Fatalf("MSET k v k v: %v %v", got, ok)
	}
	if _, ok := Lookup(OpGet).KeyPositions(nil, 1, nil); ok {
		t.Fatal("GET without a key found keys")
	}
	var r Request
	r.Op, r.Key, r.Value, r.Args = OpMSet, []byte("a"), []byte("1"), [][]byte{[]byte("b"), []byte("2"), []byte("c"), []byte("3")}
	var got []string
	r.EachKey(func(k []byte) { got = append(got, string(k)) })
	if !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Fatalf("EachKey(MSET) = %q", got)
	}
}

func TestLowerWord(t *testing.T) {
	for c := 0; c < 256; c++ {
		w := uint64(c) | uint64(c)<<24 | 0x41<<8 | 0x5a<<16 | 0x40<<32 | 0x5b<<40 | 0xc1<<48
		want := uint64(c)
		if c >= 'A' && c <= 'Z' {
			want += 32
		}
		want |= want<<24 | 0x61<<8 | 0x7a<<16 | 0x40<<32 | 0x5b<<40 | 0xc1<<48
		if got := lowerWord(w); got != want {
			t.Fatalf("byte %#x: lowerWord(%#x) = %#x, want %#x", c, w, got, want)
		}
	}
	// A name whose array goes on past it, with capitals, as decoded from
	// a request, and one that ends its array.
	buf := []byte("GETxxxxxxxxxxxx")
	if ByName(buf[:3]) != OpGet || ByName([]byte("GeT")[:3:3]) != OpGet || ByName(buf[:4]) != OpNone {
		t.Fatal("ByName reads past the name")
	}
	for _, op := range All() {
		s := Lookup(op)
		name := strings.ToUpper(s.Name)
		if got := ByFullName(name); got != op {
			t.Errorf("ByFullName(%q) = %d, want %d", name, got, op)
		}
	}
}

// TestByNameShortcut: the GET, SET and PING shortcut answers exactly what
// the table does, for every 3- and 4-byte spelling built from those
// letters' cases and their neighbours with bit 0x20 flipped.
func TestByNameShortcut(t *testing.T) {
	for _, word := range []string{"get", "set", "ping", "del", "ttl", "incr", "type", "echo", "quit"} {
		variants := []string{""}
		for _, c := range []byte(word) {
			var next []string
			for _, v := range variants {
				for _, b := range []byte{c, c &^ 0x20, c ^ 0x20 ^ 0x40, c - 1} {
					next = append(next, v+string(b))
				}
			}
			variants = next
		}
		for _, v := range variants {
			if got, want := ByName([]byte(v)), find(OpNone, []byte(v)); got != want {
				t.Errorf("ByName(%q) = %v, the table says %v", v, got, want)
			}
		}
	}
}

// Every argument's type is one COMMAND DOCS knows: redis-cli reads them
// for its hints and complained "Unknown type 'port' set for argument
// 'ip'" on every --cluster run when CLIENT KILL's ip:port was split.
func TestDocArgTypes(t *testing.T) {
	var walk func(op Op, args []Arg)
	walk = func(op Op, args []Arg) {
		for _, a := range args {
			if !docTypes[a.Type] {
				t.Errorf("%s: argument %q has type %q, which COMMAND DOCS does not know", Name(op), a.Name, a.Type)
			}
			walk(op, a.Args)
		}
	}
	for _, op := range All() {
		walk(op, Lookup(op).Args())
	}
	args, err := ParseSyntax("ADDR ip:port increment:double")
	if err != nil {
		t.Fatal(err)
	}
	if args[0].Name != "ip:port" || args[0].Type != "string" || args[1].Name != "increment" || args[1].Type != "double" {
		t.Errorf("got %+v", args)
	}
}
