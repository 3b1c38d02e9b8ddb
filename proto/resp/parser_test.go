package resp

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	tresp "github.com/tidwall/resp"
)

func argsOf(t *testing.T, in string) ([]string, int, error) {
	t.Helper()
	args, n, err := ReadCommand([]byte(in), nil, nil)
	var s []string
	for _, a := range args {
		s = append(s, string(a))
	}
	return s, n, err
}

func TestReadCommand(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		n    int
	}{
		{"*1\r\n$4\r\nPING\r\n", []string{"PING"}, 14},
		{"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n", []string{"SET", "k", ""}, 26},
		{"*0\r\n", nil, 4},
		{"*-1\r\n", nil, 5},
		{"PING\r\n", []string{"PING"}, 6},
		{"PING\n", []string{"PING"}, 5},
		{"\r\n", nil, 2},
		{"  set  k   v \r\n", []string{"set", "k", "v"}, 15},
		{`set "a b" 'c d'` + "\r\n", []string{"set", "a b", "c d"}, 17},
		{`echo "\x41\n\"" 'it\'s'` + "\n", []string{"echo", "A\n\"", "it's"}, 24},
		{"*2\r\n$4\r\nECHO\r\n$2\r\na\n\r\n*1\r\n", []string{"ECHO", "a\n"}, 22},
	}
	for _, c := range cases {
		got, n, err := argsOf(t, c.in)
		if err != nil || n != c.n || fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("ReadCommand(%q) = %q, %d, %v; want %q, %d", c.in, got, n, err, c.want, c.n)
		}
	}
}

func TestReadCommandNeedMore(t *testing.T) {
	full := "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n"
	for i := 0; i < len(full); i++ {
		args, n, err := ReadCommand([]byte(full[:i]), nil, nil)
		if n != 0 || err != nil || len(args) != 0 {
			t.Fatalf("prefix %q: got %q, %d, %v; want need-more", full[:i], args, n, err)
		}
	}
	for _, p := range []string{"PING", "PI", "set \"a b"} {
		if _, n, err := ReadCommand([]byte(p), nil, nil); n != 0 || err != nil {
			t.Errorf("inline prefix %q: n=%d err=%v, want need-more", p, n, err)
		}
	}
}

func TestReadCommandErrors(t *testing.T) {
	lim := &Limits{MaxBulkLen: 10, MaxArgs: 4, MaxInlineLen: 32}
	cases := []struct {
		in   string
		want string
	}{
		{"*1\r\n$-5\r\n", "Protocol error: invalid bulk length"},
		{"*1\r\n$abc\r\n", "Protocol error: invalid bulk length"},
		{"*1\r\n$11\r\n", "Protocol error: invalid bulk length"},
		{"*abc\r\n", "Protocol error: invalid multibulk length"},
		{"*5\r\n", "Protocol error: invalid multibulk length"},
		{"*99999999999999999999999\r\n", "Protocol error: invalid multibulk length"},
		{"*1\r\nx\r\n", "Protocol error: expected '$', got 'x'"},
		{"*1\r\n\x00", "Protocol error: expected '$', got '\\x00'"},
		{"PING \"a\r\n", "Protocol error: unbalanced quotes in request"},
		{"PING \"a\"b\r\n", "Protocol error: unbalanced quotes in request"},
		{string(bytes.Repeat([]byte("x"), 40)), "Protocol error: too big inline request"},
		{"*" + string(bytes.Repeat([]byte("1"), 40)), "Protocol error: too big mbulk count string"},
		{"*1\r\n$" + string(bytes.Repeat([]byte("1"), 40)), "Protocol error: too big bulk count string"},
		{"*1\r\n$1\r\nab\r\n", "Protocol error: invalid bulk data terminator"},
		{"a b c d e\r\n", "Protocol error: invalid multibulk length"},
		// Redis reads lengths with string2ll: no leading zeros, no "-0".
		{"*01\r\n$4\r\nPING\r\n", "Protocol error: invalid multibulk length"},
		{"*1\r\n$04\r\nPING\r\n", "Protocol error: invalid bulk length"},
		{"*1\r\n$-0\r\n", "Protocol error: invalid bulk length"},
	}
	for _, c := range cases {
		_, n, err := ReadCommand([]byte(c.in), nil, lim)
		if err == nil || err.Error() != c.want || n != 0 || !errors.Is(err, ErrProtocol) {
			t.Errorf("ReadCommand(%q) = n %d, err %v; want %q", c.in, n, err, c.want)
		}
	}
}

// randomCommand builds a command as tidwall/resp (an independent encoder)
// writes it, and the arguments it carries.
func randomCommand(rng *rand.Rand) ([]byte, []string) {
	n := 1 + rng.Intn(5)
	args := make([]string, n)
	vals := make([]tresp.Value, n)
	for i := range args {
		b := make([]byte, rng.Intn(40))
		rng.Read(b)
		args[i] = string(b)
		vals[i] = tresp.StringValue(args[i])
	}
	wire, err := tresp.ArrayValue(vals).MarshalRESP()
	if err != nil {
		panic(err)
	}
	return wire, args
}

// TestReplayChunks replays 10,000 random commands whole, split in two and in
// random small chunks, as a connection would see them arrive.
func TestReplayChunks(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var stream []byte
	var want [][]string
	for i := 0; i < 10000; i++ {
		w, a := randomCommand(rng)
		if i%7 == 0 { // inline commands mixed in
			w, a = []byte(fmt.Sprintf("PING x%d\r\n", i)), []string{"PING", fmt.Sprintf("x%d", i)}
		}
		stream = append(stream, w...)
		want = append(want, a)
	}
	for _, mode := range []string{"whole", "half", "chunks"} {
		var buf []byte
		got := 0
		var args [][]byte
		feed := func(p []byte) {
			buf = append(buf, p...)
			for {
				var n int
				var err error
				args, n, err = ReadCommand(buf, args, nil)
				if err != nil {
					t.Fatalf("%s: command %d: %v", mode, got, err)
				}
				if n == 0 {
					return
				}
				if fmt.Sprint(toStrings(args)) != fmt.Sprint(want[got]) {
					t.Fatalf("%s: command %d = %q, want %q", mode, got, args, want[got])
				}
				got++
				buf = buf[n:]
			}
		}
		switch mode {
		case "whole":
			feed(stream)
		case "half":
			feed(stream[:len(stream)/2])
			feed(stream[len(stream)/2:])
		case "chunks":
			for p := stream; len(p) > 0; {
				k := 1 + rng.Intn(16)
				if k > len(p) {
					k = len(p)
				}
				feed(p[:k])
				p = p[k:]
			}
		}
		if got != len(want) || len(buf) != 0 {
			t.Fatalf("%s: parsed %d of %d commands, %d bytes left", mode, got, len(want), len(buf))
		}
	}
}

func toStrings(a [][]byte) []string {
	s := make([]string, len(a))
	for i := range a {
		s[i] = string(a[i])
	}
	return s
}

// TestReadCommandAllocs: the stateless reader and a Parser (resuming
// partial commands too, once its offsets array has grown) allocate nothing.
func TestReadCommandAllocs(t *testing.T) {
	in := []byte("*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$16\r\n0123456789abcdef\r\n")
	inline := []byte("PING\r\n")
	args := make([][]byte, 0, 8)
	var p Parser
	p.ReadCommand(in[:20], args, nil) // let it allocate its offsets once
	p.ReadCommand(in, args, nil)
	for _, c := range []struct {
		name string
		read func(buf []byte) ([][]byte, int, error)
	}{
		{"ReadCommand", func(buf []byte) ([][]byte, int, error) { return ReadCommand(buf, args, nil) }},
		{"Parser", func(buf []byte) ([][]byte, int, error) { return p.ReadCommand(buf, args, nil) }},
	} {
		allocs := testing.AllocsPerRun(1000, func() {
			args, _, _ = c.read(in)
			args, _, _ = c.read(inline)
			args, _, _ = c.read(in[:10])
			args, _, _ = c.read(in[:30])
			args, _, _ = c.read(in)
		})
		if allocs != 0 {
			t.Errorf("%s allocates %.1f times per run, want 0", c.name, allocs)
		}
	}
}

// FuzzReadCommand: no input panics or reads out of bounds; feeding the same
// input split in two at any point gives the same commands as feeding it
// whole; a consumed command's arguments lie inside what was consumed.
func FuzzReadCommand(f *testing.F) {
	for _, s := range []string{
		"*1\r\n$4\r\nPING\r\n", "PING\r\n", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n",
		"set \"a\\x41\" 'b'\r\n", "*0\r\n", "*-1\r\n", "*1\r\n$-1\r\n", "\r\n\n",
	} {
		f.Add([]byte(s), uint16(3))
	}
	lim := &Limits{MaxBulkLen: 1 << 16, MaxArgs: 64, MaxInlineLen: 256}
	f.Fuzz(func(t *testing.T, in []byte, split uint16) {
		whole := parseAll(t, append([]byte(nil), in...), lim, -1)
		at := int(split) % (len(in) + 1)
		halves := parseAll(t, append([]byte(nil), in...), lim, at)
		if whole != halves {
			t.Fatalf("whole %q != split at %d %q", whole, at, halves)
		}
	})
}

// parseAll parses every command in in, fed whole (split < 0) or in two
// pieces, and describes the commands and the final error as a string.
func parseAll(t *testing.T, in []byte, lim *Limits, split int) string {
	var out bytes.Buffer
	var args [][]byte
	buf := in
	avail := len(in)
	if split >= 0 {
		avail = split
	}
	pos := 0
	for {
		args, n, err := ReadCommand(buf[pos:avail], args, lim)
		if err != nil {
			fmt.Fprintf(&out, "err %v", err)
			return out.String()
		}
		if n == 0 {
			if avail < len(buf) {
				avail = len(buf)
				continue
			}
			fmt.Fprintf(&out, "rest %d", avail-pos)
			return out.String()
		}
		if n < 0 || pos+n > avail {
			t.Fatalf("consumed %d of %d bytes", n, avail-pos)
		}
		for _, a := range args {
			fmt.Fprintf(&out, "%q ", a)
		}
		out.WriteString("| ")
		pos += n
	}
}

// SplitArgs splits as redis-server splits an inline request (checked
// against redis-server 7: SET j "a\xZZ" stores axZZ).
func TestSplitArgs(t *testing.T) {
	for in, want := range map[string][]string{
		`SET j "a\xZZ"`:     {"SET", "j", "axZZ"},
		`SET j "\x41\x4a"`:  {"SET", "j", "AJ"},
		"a\vb\fc":           {"a", "b", "c"},
		`x 'it\'s' "q\"\\"`: {"x", "it's", `q"\`},
		`  `:                nil,
	} {
		got, err := SplitArgs(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("SplitArgs(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := SplitArgs(`a "b`); !errors.Is(err, ErrUnbalancedQuotes) {
		t.Errorf("unbalanced: %v", err)
	}
}
