package redisconf

import (
	"errors"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// splitCases are sdssplitargs's behaviour, one rule per row.
var splitCases = []struct {
	name string
	in   string
	want []string // nil with err
	err  bool
}{
	{"empty", "", nil, false},
	{"blanks only", " \t\v\f\r\n ", nil, false},
	{"words", "save 3600 1 300 100", []string{"save", "3600", "1", "300", "100"}, false},
	{"tabs and runs of blanks", "a\t\tb   c", []string{"a", "b", "c"}, false},
	{"vertical tab inside a word", "a\vb", []string{"a\vb"}, false},
	{"double quotes keep spaces", `dir "/var/lib/my redis"`, []string{"dir", "/var/lib/my redis"}, false},
	{"empty double quotes", `save ""`, []string{"save", ""}, false},
	{"empty single quotes", `save ''`, []string{"save", ""}, false},
	{"escapes in double quotes", `"a\nb\rc\td\be\af"`, []string{"a\nb\rc\td\be\af"}, false},
	{"backslash and quote", `"a\\b\"c"`, []string{`a\b"c`}, false},
	{"unknown escape is the character", `"\q\'"`, []string{`q'`}, false},
	{"hex escape", `"\x41\x7a\xff\x00"`, []string{"Az\xff\x00"}, false},
	{"hex escape upper case", `"\x4A"`, []string{"J"}, false},
	{"short hex escape is literal x", `"\x4"`, []string{"x4"}, false},
	{"bad hex escape is literal x", `"\xZZ"`, []string{"xZZ"}, false},
	{"single quotes literal", `'a\nb\\c"d'`, []string{`a\nb\\c"d`}, false},
	{"single quote escape", `'it\'s'`, []string{"it's"}, false},
	{"quote in the middle of a word", `ab"c d"`, []string{"abc d"}, false},
	{"single quote in the middle", `ab'c d'`, []string{"abc d"}, false},
	{"closing quote then tab", "\"a\"\tb", []string{"a", "b"}, false},
	{"NUL ends the line", "a b\x00c d", []string{"a", "b"}, false},
	{"unterminated double", `dir "/tmp`, nil, true},
	{"unterminated single", `dir '/tmp`, nil, true},
	{"closing double quote followed by a letter", `"a"b`, nil, true},
	{"closing single quote followed by a letter", `'a'b`, nil, true},
	{"closing quote followed by a quote", `"a""b"`, nil, true},
	{"trailing backslash in double quotes", `"a\`, nil, true},
	{"escaped closing quote leaves it open", `"a\"`, nil, true},
	{"trailing backslash in single quotes", `'a\'`, nil, true},
}

func TestSplitArgs(t *testing.T) {
	for _, c := range splitCases {
		t.Run(c.name, func(t *testing.T) {
			got, err := SplitArgs(c.in)
			if c.err {
				if !errors.Is(err, ErrUnbalancedQuotes) {
					t.Fatalf("SplitArgs(%q) = %q, %v; want ErrUnbalancedQuotes", c.in, got, err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("SplitArgs(%q) = %q, %v; want %q", c.in, got, err, c.want)
			}
		})
	}
}

// TestQuoteRoundTrip checks that every byte survives Quote then SplitArgs,
// the property CONFIG REWRITE relies on for string values.
func TestQuoteRoundTrip(t *testing.T) {
	var all strings.Builder
	for i := 0; i < 256; i++ {
		all.WriteByte(byte(i))
	}
	for _, s := range []string{"", "plain", "two words", `q"uo\te`, "\x00\xff\n", all.String()} {
		got, err := SplitArgs("dir " + Quote(s))
		if err != nil || len(got) != 2 || got[1] != s {
			t.Fatalf("SplitArgs(Quote(%q)) = %q, %v", s, got, err)
		}
	}
	if q := Quote("a\x01\"b"); q != `"a\x01\"b"` {
		t.Fatalf("Quote = %s, want sdscatrepr's \"a\\x01\\\"b\"", q)
	}
}

// FuzzSplitArgs checks properties every input must keep: no panic; no
// argument from a line that has no non-blank byte; quoting every argument
// and joining them reads back the same arguments; and a line without quotes
// splits as strings.Fields on Redis's separators does.
func FuzzSplitArgs(f *testing.F) {
	for _, c := range splitCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args, err := SplitArgs(line)
		if err != nil {
			if !strings.ContainsAny(line, `"'`) {
				t.Fatalf("SplitArgs(%q) failed without a quote: %v", line, err)
			}
			return
		}
		quoted := make([]string, len(args))
		for i, a := range args {
			quoted[i] = Quote(a)
		}
		again, err := SplitArgs(strings.Join(quoted, " "))
		if err != nil || len(again) != len(args) || (len(args) > 0 && !reflect.DeepEqual(again, args)) {
			t.Fatalf("round trip of %q: %q, %v; want %q", line, again, err, args)
		}
		if !strings.ContainsAny(line, "\"'\x00\v\f") {
			want := strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' || r == '\r' || r == '\n' })
			if len(want) != len(args) || (len(args) > 0 && !reflect.DeepEqual(want, args)) {
				t.Fatalf("SplitArgs(%q) = %q, want %q", line, args, want)
			}
		}
	})
}

// TestSplitArgsRedisCLI compares SplitArgs with redis-cli, which splits each
// line it reads from a pipe with sdssplitargs: every case of splitCases and
// 500 random lines of quotes, backslashes and blanks are sent as
// EVAL "return ARGV" 0 <line>, so redis-server echoes the arguments back, or
// redis-cli answers "Invalid argument(s)" where sdssplitargs fails.
func TestSplitArgsRedisCLI(t *testing.T) {
	cli := testkit.Need(t, "redis-cli", "the sdssplitargs oracle")
	dir := t.TempDir()
	sock := filepath.Join(dir, "r.sock")
	conf := writeFile(t, filepath.Join(dir, "redis.conf"), "port 0\nunixsocket "+sock+"\nsave \"\"\n")
	startRedis(t, conf, sock)

	var lines []string
	for _, c := range splitCases {
		if !strings.ContainsAny(c.in, "\x00\r\n") {
			lines = append(lines, c.in)
		}
	}
	rnd := rand.New(rand.NewPCG(34, 1))
	const alphabet = "ab \"'\\x4F\tn\v"
	for range 500 {
		b := make([]byte, 1+rnd.IntN(12))
		for i := range b {
			b[i] = alphabet[rnd.IntN(len(alphabet))]
		}
		lines = append(lines, string(b))
	}
	var in strings.Builder
	for _, l := range lines {
		in.WriteString(`EVAL "return ARGV" 0 ` + l + "\nECHO @@@\n")
	}
	cmd := exec.Command(cli, "-s", sock, "--no-raw")
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli: %v\n%s", err, out)
	}
	replies := strings.Split(strings.TrimSuffix(string(out), "\"@@@\"\n"), "\"@@@\"\n")
	if len(replies) != len(lines) {
		t.Fatalf("%d replies from redis-cli for %d lines:\n%s", len(replies), len(lines), out)
	}
	for i, l := range lines {
		var want []string
		wantErr := false
		switch r := strings.TrimSuffix(replies[i], "\n"); {
		case r == "Invalid argument(s)":
			wantErr = true
		case r == "(empty array)":
		default:
			for _, el := range strings.Split(r, "\n") {
				_, q, ok := strings.Cut(el, ") ")
				if !ok {
					t.Fatalf("line %q: unexpected redis-cli output %q", l, r)
				}
				a, err := SplitArgs(q)
				if err != nil || len(a) != 1 {
					t.Fatalf("line %q: cannot read redis-cli's %q: %v", l, q, err)
				}
				want = append(want, a[0])
			}
		}
		got, err := SplitArgs(l)
		if wantErr != (err != nil) || !wantErr && strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Errorf("SplitArgs(%q) = %q, %v; redis-cli: %q, invalid %v", l, got, err, want, wantErr)
		}
	}
	t.Logf("%d lines agree with redis-cli", len(lines))
}
