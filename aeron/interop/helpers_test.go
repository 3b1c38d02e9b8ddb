package interop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/javadriver"
	"github.com/goblin-kv/goblin/internal/testkit"
)

// Generous bounds for a 2-core machine shared with other work: these only
// stop a broken test from hanging, they are not performance assertions.
const (
	startTimeout = 2 * time.Minute
	ioTimeout    = 2 * time.Minute
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(goVictimEnv); dir != "" {
		runGoVictim(dir)
	}
	code := m.Run()
	stopBenchDriver()
	os.Exit(code)
}

// shmTempDir is a private directory for a driver's files under /dev/shm
// (tmpfs), where the Java driver keeps its own by default and Aeron
// deployments keep theirs, removed when the test ends; the test's temp
// dir where /dev/shm is missing. A driver comparison must put every
// driver on the same file system: log buffers in an ext4 file are written
// back to disk as the publisher writes them, and every page written back
// faults again on its next store.
func shmTempDir(t testing.TB) string {
	t.Helper()
	if st, err := os.Stat("/dev/shm"); err != nil || !st.IsDir() {
		return t.TempDir()
	}
	dir, err := os.MkdirTemp("/dev/shm", "goblin-interop-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// needJava builds aeron/interop/java (once per test binary) or skips the test
// when java or mvn is missing, and only then. The build fetches
// io.aeron:aeron-all into the local Maven repository if `make setup` has not,
// which is where the driver launcher looks for it.
func needJava(t testing.TB) *Java {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	j, err := BuildJava(ctx)
	if errors.Is(err, ErrToolMissing) {
		testkit.Missing(t, "the interop peers: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := javadriver.FindJar(""); err != nil {
		t.Fatal(err)
	}
	return j
}

func startDriver(t testing.TB, o javadriver.Options) *javadriver.Driver {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	d, err := javadriver.Start(ctx, o)
	if err != nil {
		t.Fatalf("start media driver: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			if b, err := d.Log(); err == nil {
				t.Logf("driver log %s:\n%s", d.LogPath(), b)
			}
		}
		d.Stop()
	})
	return d
}

func connect(t testing.TB, d *javadriver.Driver, o aeron.Options) *aeron.Client {
	t.Helper()
	o.Dir = d.Dir()
	if o.DriverTimeout == 0 {
		o.DriverTimeout = 20 * time.Second
	}
	c, err := aeron.Connect(o)
	if err != nil {
		t.Fatalf("aeron.Connect(%s): %v", d.Dir(), err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// startProc runs a Java interop program and waits for its READY line. It
// is killed at cleanup; its output is logged if the test failed.
func startProc(t testing.TB, j *Java, d *javadriver.Driver, program string, args ...string) *Proc {
	t.Helper()
	return startProcIn(t, j, d.Dir(), program, args...)
}

// startProcIn is startProc for a driver in dir (the Java driver or
// goblin's Go driver).
func startProcIn(t testing.TB, j *Java, dir, program string, args ...string) *Proc {
	t.Helper()
	p, err := j.Start(context.Background(), dir, program, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("%s output:\n%s", program, p.Output())
		}
	})
	if _, err := p.Line("READY", startTimeout); err != nil {
		t.Fatal(err)
	}
	return p
}

func loopback(port int) string { return fmt.Sprintf("127.0.0.1:%d", port) }

// withParam adds key=value to a channel URI with the aeron package's parser.
func withParam(t testing.TB, channel, key, value string) string {
	t.Helper()
	u, err := aeron.ParseChannel(channel)
	if err != nil {
		t.Fatalf("ParseChannel(%q): %v", channel, err)
	}
	return u.Set(key, value).String()
}

// offerer is what both publication types offer through.
type offerer interface {
	Offer([]byte) int64
	IsConnected() bool
	Close() error
	MaxPayloadLength() int
}

// offer retries msg while the publication is back pressured, in an admin
// action or not yet connected.
func offer(t testing.TB, p offerer, msg []byte) int64 {
	t.Helper()
	deadline := time.Now().Add(ioTimeout)
	for {
		r := p.Offer(msg)
		if r > 0 {
			return r
		}
		if r == aeron.Closed || r == aeron.MaxPositionExceeded {
			t.Fatalf("offer: %s", aeron.StatusString(r))
		}
		if time.Now().After(deadline) {
			t.Fatalf("offer stuck at %s for %v", aeron.StatusString(r), ioTimeout)
		}
		time.Sleep(20 * time.Microsecond)
	}
}

// nextMessage waits up to ioTimeout for the next complete message on sub,
// polling every pause, and returns it appended to dst[:0]; what and seq
// name the awaited message in the failure ("no reply to request 7").
func nextMessage(t testing.TB, sub *aeron.Subscription, dst []byte, pause time.Duration, what string, seq int) []byte {
	t.Helper()
	deadline := time.Now().Add(ioTimeout)
	for {
		if msg, _, ok := sub.NextMessage(dst[:0]); ok {
			return msg
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s %d", what, seq)
		}
		time.Sleep(pause)
	}
}

func addPub(t testing.TB, c *aeron.Client, channel string, stream int32, exclusive bool) offerer {
	t.Helper()
	var p offerer
	var err error
	if exclusive {
		p, err = c.AddExclusivePublication(channel, stream)
	} else {
		p, err = c.AddPublication(channel, stream)
	}
	if err != nil {
		t.Fatalf("add publication %s: %v", channel, err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func TestPattern(t *testing.T) {
	b := make([]byte, 1000)
	Fill(b, 7)
	if Check(b, 7) != -1 {
		t.Fatal("pattern does not check against itself")
	}
	if Check(b, 8) == -1 {
		t.Fatal("messages 7 and 8 have the same pattern")
	}
	b[600]++
	if got := Check(b, 7); got != 600 {
		t.Fatalf("Check found the flipped byte at %d, want 600", got)
	}
	// Java computes (byte)(seq*131 + j*7 + (j>>>8)*13): spot values.
	for _, c := range []struct {
		seq  int64
		j    int
		want byte
	}{{0, 0, 0}, {1, 0, 131}, {0, 1, 7}, {0, 256, (256*7 + 13) % 256}, {3, 300, (3*131 + 300*7 + 13) % 256}} {
		if got := Pattern(c.seq, c.j); got != c.want {
			t.Errorf("Pattern(%d,%d) = %d, want %d", c.seq, c.j, got, c.want)
		}
	}
}

func TestParseFields(t *testing.T) {
	m := ParseFields("RESULT rtt_ns count=100 p50=612 p999=9000")
	if n, err := Int(m, "p50"); err != nil || n != 612 {
		t.Fatalf("p50 = %d, %v", n, err)
	}
	if _, err := Int(m, "p99"); err == nil {
		t.Fatal("missing field not reported")
	}
}

func TestPomVersionMatchesDriver(t *testing.T) {
	b, err := os.ReadFile(ProjectDir() + "/pom.xml")
	if err != nil {
		t.Fatal(err)
	}
	want := "<aeron.version>" + javadriver.AeronVersion + "</aeron.version>"
	if !strings.Contains(string(b), want) {
		t.Fatalf("aeron/interop/java/pom.xml does not pin %s", want)
	}
}
