package redisconf

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/internal/testkit"
)

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

func TestParseLines(t *testing.T) {
	var p Parser
	text := "# comment\n\n   \t\r\n  # indented comment\nSAVE 3600 1 300 100 60 10000\r\n  MaxMemory   1gb  \nsave \"\"\n\v\n"
	dirs, err := p.Parse("a.conf", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range dirs {
		got = append(got, d.File+":"+itoa(d.Line)+":"+d.Name+":"+strings.Join(d.Args, ","))
	}
	want := []string{"a.conf:5:save:3600,1,300,100,60,10000", "a.conf:6:maxmemory:1gb", "a.conf:7:save:"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestParseErrors(t *testing.T) {
	cases := []struct{ text, want string }{
		{"port 1\ndir \"/tmp\n", `x.conf:2: >>> 'dir "/tmp' Unbalanced quotes in configuration line`},
		{"dir '/tmp'x\n", `x.conf:1: >>> 'dir '/tmp'x' Unbalanced quotes in configuration line`},
		{"include a b\n", `x.conf:1: >>> 'include a b' Bad directive or wrong number of arguments`},
		{"include /nonexistent/goblin-test.conf\n", `x.conf:1: >>> 'include /nonexistent/goblin-test.conf' Fatal error, can't open config file '/nonexistent/goblin-test.conf': No such file or directory`},
	}
	for _, c := range cases {
		var p Parser
		_, err := p.Parse("x.conf", []byte(c.text))
		if err == nil || err.Error() != c.want {
			t.Errorf("Parse(%q) error\n got %v\nwant %s", c.text, err, c.want)
		}
	}
}

// TestCheckErrors checks that Check reports every bad line at once, in
// Redis's words, and sorts Redis-only directives apart.
func TestCheckErrors(t *testing.T) {
	text := strings.Join([]string{
		"maxmemory 1x",                          // 1
		"frobnicate yes",                        // 2
		"maxclients 1 2",                        // 3
		"appendonly maybe",                      // 4
		"save 10",                               // 5
		"maxmemory-policy lru",                  // 6
		"databases ten",                         // 7
		"client-output-buffer-limit normal 0 0", // 8
		"maxmemory-clients 10%%",                // 9
		"rename-command CONFIG",                 // 10
	}, "\n")
	var p Parser
	dirs, err := p.Parse("c.conf", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Check(dirs)
	want := []string{
		"c.conf:1: >>> 'maxmemory 1x' argument must be a memory value",
		"c.conf:2: >>> 'frobnicate yes' Bad directive or wrong number of arguments",
		"c.conf:3: >>> 'maxclients 1 2' wrong number of arguments",
		"c.conf:4: >>> 'appendonly maybe' argument must be 'yes' or 'no'",
		"c.conf:5: >>> 'save 10' Invalid save parameters",
		"c.conf:6: >>> 'maxmemory-policy lru' argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction",
		"c.conf:7: >>> 'databases ten' argument couldn't be parsed into an integer",
		"c.conf:8: >>> 'client-output-buffer-limit normal 0 0' Wrong number of arguments in buffer limit configuration.",
		"c.conf:9: >>> 'maxmemory-clients 10%%' argument must be a memory or percent value",
		"c.conf:10: >>> 'rename-command CONFIG' Bad directive or wrong number of arguments",
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Fatalf("Check errors:\n%v\nwant\n%s", err, strings.Join(want, "\n"))
	}
}

func TestCheckValues(t *testing.T) {
	text := "save 900 1\nsave \"300 10 60 10000\"\nmaxmemory 100mb\nMAXMEMORY 2gb\nappendonly yes\nmaxmemory-clients 10%\nlisten tcp://127.0.0.1:0\nlisten uds:///tmp/g.sock\n"
	var p Parser
	dirs, err := p.Parse("v.conf", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Check(dirs)
	if err != nil {
		t.Fatal(err)
	}
	v := r.Values()
	if got := v["save"]; !reflect.DeepEqual(got, []string{"900", "1", "300", "10", "60", "10000"}) {
		t.Errorf("save = %q", got)
	}
	if got := v["maxmemory"]; !reflect.DeepEqual(got, []string{"2gb"}) {
		t.Errorf("maxmemory = %q, want the last line's", got)
	}
	if got := v["listen"]; len(got) != 2 {
		t.Errorf("listen = %q, want both lines", got)
	}
	if len(r.Unsupported) != 1 || r.Unsupported[0].Line != 5 || !errors.Is(r.Err(), ErrUnsupported) {
		t.Fatalf("Unsupported = %v, want appendonly at line 5", r.Unsupported)
	}
	if w := r.Warnings(); len(w) != 1 || !strings.Contains(w[0], "v.conf:5: >>> 'appendonly yes' Redis directive not supported by goblin") {
		t.Fatalf("Warnings = %q", w)
	}
}

func TestParseInt(t *testing.T) {
	for s, want := range map[string]int64{"0": 0, "7": 7, "-7": -7, "9223372036854775807": 1<<63 - 1, "-9223372036854775808": -1 << 63} {
		if got, ok := parseInt(s); !ok || got != want {
			t.Errorf("parseInt(%q) = %d, %v; want %d", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "-", "+1", "01", "-0", " 1", "1 ", "1e3", "0x10", "9223372036854775808"} {
		if got, ok := parseInt(s); ok {
			t.Errorf("parseInt(%q) = %d, want an error as string2ll gives", s, got)
		}
	}
}

func TestMemory(t *testing.T) {
	good := map[string]uint64{"0": 0, "1": 1, "1b": 1, "1k": 1000, "1kb": 1024, "1K": 1000, "1KB": 1024, "1m": 1000000,
		"1mb": 1 << 20, "1g": 1e9, "1gb": 1 << 30, "1Gb": 1 << 30, "": 0, "kb": 0, "18446744073709551615": 1<<64 - 1}
	for s, want := range good {
		if got, err := ParseMemory(s); err != nil || got != want {
			t.Errorf("ParseMemory(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"-1", "+1", "1 kb", "1.5mb", "1tb", "1kbb", "18446744073709551616", "17179869184gb"} {
		if got, err := ParseMemory(s); err == nil {
			t.Errorf("ParseMemory(%q) = %d, want an error", s, got)
		}
	}
	for v, want := range map[uint64]string{0: "0", 1000: "1000", 1024: "1kb", 1536: "1536", 3 << 20: "3mb", 1 << 30: "1gb", 1<<30 + 1024: "1048577kb"} {
		if got := FormatMemory(v); got != want {
			t.Errorf("FormatMemory(%d) = %q, want %q", v, got, want)
		}
	}
}

// TestIncludeGlob checks include as Redis reads it: names relative to the
// working directory, globs in sorted order, an empty glob ignored.
func TestIncludeGlob(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeFile(t, "conf.d/b.conf", "maxmemory 2mb\n")
	writeFile(t, "conf.d/a.conf", "maxmemory 1mb\ninclude sub/*.conf\n")
	writeFile(t, "main.conf", "include conf.d/*.conf\ninclude empty.d/*.conf\ndatabases 4\n")
	dirs, err := ParseFile("main.conf")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range dirs {
		got = append(got, d.File+" "+d.Name+" "+strings.Join(d.Args, " "))
	}
	want := []string{"conf.d/a.conf maxmemory 1mb", "conf.d/b.conf maxmemory 2mb", "main.conf databases 4"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestIncludeDepth(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeFile(t, "loop.conf", "include loop.conf\n")
	_, err := ParseFile("loop.conf")
	if !errors.Is(err, ErrIncludeDepth) || !strings.Contains(err.Error(), "loop.conf:1: >>> 'include loop.conf'") {
		t.Fatalf("err = %v, want ErrIncludeDepth naming loop.conf:1", err)
	}
}

// TestDebianRedisConf parses the redis.conf the Debian package installs and
// checks that every directive in it is in the table, and that the report
// sorts them into goblin's and Redis-only ones.
func TestDebianRedisConf(t *testing.T) {
	const path = "/etc/redis/redis.conf"
	_, err := os.Stat(path)
	testkit.Require(t, "redis-server 7.0's "+path, err)
	dirs, err := ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Check(dirs)
	if err != nil {
		t.Fatalf("Debian's redis.conf has directives the table does not know:\n%v", err)
	}
	if len(dirs) < 60 || len(r.Supported) == 0 || len(r.Unsupported) == 0 {
		t.Fatalf("%d directives: %d supported, %d unsupported", len(dirs), len(r.Supported), len(r.Unsupported))
	}
	seen := map[string]bool{}
	for _, s := range r.Supported {
		seen[s.Name] = true
	}
	for _, name := range []string{"databases", "timeout", "port", "bind"} {
		if !seen[name] {
			t.Errorf("%s is not reported as supported", name)
		}
	}
	t.Logf("%s: %d directives, %d supported by goblin, %d Redis-only:", path, len(dirs), len(r.Supported), len(r.Unsupported))
	for _, w := range r.Warnings() {
		t.Log(w)
	}
}
