package interop

import (
	"context"
	"errors"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/driver"
	"github.com/goblin-kv/goblin/aeron/javadriver"
	"github.com/goblin-kv/goblin/internal/testkit"
)

// activity gives a driver the same history whichever it is: a
// subscription and an exclusive publication with traffic, a client
// counter, and one refused command (a session id clash), all from goblin's
// Go client.
func activity(t *testing.T, dir string) *aeron.Client {
	t.Helper()
	c, err := aeron.Connect(aeron.Options{Dir: dir, DriverTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	const ch = "aeron:ipc?term-length=64k|session-id=77"
	sub, err := c.AddSubscription(ch, 1001)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := c.AddExclusivePublication(ch, 1001)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddExclusivePublication(ch, 1001); !errors.Is(err, aeron.ErrDriver) {
		t.Fatalf("clashing session: %v", err)
	}
	if _, err := c.AddCounter(1001, []byte{1, 2, 3, 4}, "goblin stat test"); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, ioTimeout, "image", func() (bool, string) { return sub.ImageCount() == 1, "" })
	for i := range 10 {
		offer(t, pub, []byte{byte(i), 1, 2, 3})
	}
	n := 0
	testkit.Eventually(t, ioTimeout, "messages", func() (bool, string) { n += sub.Poll(func([]byte, *aeron.Header) {}, 10); return n == 10, "" })
	// The driver updates pub-pos on its next cycles.
	time.Sleep(50 * time.Millisecond)
	return c
}

// runTool runs one of Aeron's sample tools against dir and returns its
// standard output.
func runTool(t *testing.T, j *Java, dir, class string, args ...string) string {
	t.Helper()
	p, err := j.StartClass(context.Background(), dir, class, args...)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(ioTimeout):
		p.Kill()
		t.Fatalf("%s did not finish:\n%s", class, p.Output())
	}
	return p.Output()
}

var (
	digits  = regexp.MustCompile(`-?\d[\d,]*`)
	commits = regexp.MustCompile(`commit=\S+`)
	stack   = regexp.MustCompile(`(?m)^\s+at .*\n`)
)

// shape reduces a tool's output to what must not differ between drivers:
// numbers become N (ids, times, positions and pids differ from run to
// run, and with them column widths, so runs of spaces become one), the
// directory becomes DIR, the commit in version labels X, Java stack trace
// lines go, and lines are sorted where the tool's order follows hash maps.
func shape(out, dir string, sorted bool) []string {
	out = strings.ReplaceAll(out, dir, "DIR")
	out = stack.ReplaceAllString(out, "")
	out = commits.ReplaceAllString(out, "commit=X")
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		l = strings.Join(strings.Fields(digits.ReplaceAllString(l, "N")), " ")
		if l != "" {
			lines = append(lines, l)
		}
	}
	if sorted {
		sort.Strings(lines)
	}
	return lines
}

func diffLines(a, b []string) string {
	var d strings.Builder
	for i := 0; i < max(len(a), len(b)); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			d.WriteString("  go:   " + x + "\n  java: " + y + "\n")
		}
	}
	return d.String()
}

// TestStatToolsReadGoDriver runs Aeron's AeronStat, StreamStat, ErrorStat
// and LossStat against the Go driver and the Java driver after the same
// activity and compares their output shapes line by line.
func TestStatToolsReadGoDriver(t *testing.T) {
	t.Parallel() // its own drivers, ports and Java peers; it times nothing
	j := needJava(t)
	godrv := startGoDriver(t, driver.Options{})
	javadrv := startDriver(t, javadriver.Options{})
	dirs := map[string]string{"go": godrv.Dir(), "java": javadrv.Dir()}
	for _, dir := range dirs {
		activity(t, dir)
	}
	tools := []struct {
		class  string
		args   []string
		sorted bool
	}{
		{"io.aeron.samples.AeronStat", []string{"watch=false"}, false},
		{"io.aeron.samples.StreamStat", nil, true},
		{"io.aeron.samples.ErrorStat", nil, false},
		{"io.aeron.samples.LossStat", nil, false},
	}
	for _, tool := range tools {
		out := map[string][]string{}
		for name, dir := range dirs {
			out[name] = shape(runTool(t, j, dir, tool.class, tool.args...), dir, tool.sorted)
		}
		if d := diffLines(out["go"], out["java"]); d != "" {
			t.Errorf("%s output differs:\n%s", tool.class, d)
		}
		if len(out["go"]) < 2 {
			t.Errorf("%s printed too little: %q", tool.class, out["go"])
		}
		t.Logf("%s on the Go driver:\n%s", tool.class, strings.Join(out["go"], "\n"))
	}
}
