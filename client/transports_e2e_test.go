package client

// End-to-end tests of the library over every transport goblin serves, in
// both protocols, against real goblin-server processes: pipelines of any
// length (a ring pipeline of more than 128 commands once never finished) and
// values of every size the store accepts (not only what one ring record
// holds).

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron/javadriver"
	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
	"github.com/goblin-kv/goblin/proto/sbe"
	"github.com/goblin-kv/goblin/store"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/aeron"
	"github.com/goblin-kv/goblin/transport/ring"
)

// Transport keys of startEveryTransport's targets.
var (
	socketAndRingKeys = []string{"uds/resp", "uds/sbe", "tcp/resp", "tcp/sbe", "ring/resp", "ring/sbe"}
	aeronKeys         = []string{"aeron-ipc/resp", "aeron-ipc/sbe", "aeron-udp/resp", "aeron-udp/sbe"}
)

// startSocketsAndRings runs one goblin-server serving Unix sockets, TCP and
// the ring, each in both protocols, and returns client targets keyed as in
// socketAndRingKeys. Ring clients yield while they wait, so the tests
// behave on a loaded two-core machine.
func startSocketsAndRings(t *testing.T, extra ...string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	respRing, sbeRing := filepath.Join(dir, "ring-resp"), filepath.Join(dir, "ring-sbe")
	targets := testproc.StartGoblinServer(t, append([]string{
		"--listen", "ring://" + respRing + "?proto=resp",
		"--listen", "ring://" + sbeRing + "?proto=sbe"}, extra...)...)
	targets["ring/resp"] = "ring://" + respRing + "?proto=resp&wait=yield"
	targets["ring/sbe"] = "ring://" + sbeRing + "?proto=sbe&wait=yield"
	return targets
}

// needAeron skips (outside CI) or fails (in CI, CI=true) a test when the
// Java media driver cannot run here.
func needAeron(t *testing.T) {
	t.Helper()
	_, errJava := javadriver.FindJava()
	_, errJar := javadriver.FindJar("")
	if errJava == nil && errJar == nil {
		return
	}
	testkit.Missing(t, "the Aeron rows need the Java media driver: java: %v; jar: %v (run make setup)", errJava, errJar)
}

// startAeron runs one goblin-server serving Aeron IPC and two-driver Aeron
// UDP on loopback, each in both protocols, and returns client targets
// keyed as in aeronKeys. The IPC listeners share the server's default
// driver (goblin's Go driver, in-process); the UDP listeners share a Java
// driver the server supervises, and the UDP clients use a second one, as
// a client on another host would.
func startAeron(t *testing.T) map[string]string {
	t.Helper()
	root, err := os.MkdirTemp(shmBase(), "goblin-client-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	ipcDir, udpDir := filepath.Join(root, "server-ipc"), filepath.Join(root, "server-udp")
	cd, err := javadriver.Start(context.Background(), javadriver.Options{Dir: filepath.Join(root, "client")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cd.Stop() })
	ports := testproc.FreeUDPPorts(t, 4)
	udp := func(i int, p string) string {
		return fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d|control=127.0.0.1:%d|proto=%s", ports[2*i], ports[2*i+1], p)
	}
	ipcResp := "aeron:ipc?proto=resp"
	ipcSBE := "aeron:ipc?proto=sbe|stream=2001|reply-stream=2002"
	bin := testproc.Build(t, "./cmd/goblin-server")
	p := testproc.Start(t, bin, "--metrics", "off",
		"--listen", ipcResp+"|dir="+ipcDir,
		"--listen", ipcSBE+"|dir="+ipcDir+"|driver=external",
		"--listen", udp(0, "resp")+"|dir="+udpDir+"|driver=java",
		"--listen", udp(1, "sbe")+"|dir="+udpDir+"|driver=external")
	p.WaitLog(t, `msg=ready`, 120*time.Second)
	return map[string]string{
		"aeron-ipc/resp": ipcResp + "|dir=" + ipcDir,
		"aeron-ipc/sbe":  ipcSBE + "|dir=" + ipcDir,
		"aeron-udp/resp": udp(0, "resp") + "|dir=" + cd.Dir(),
		"aeron-udp/sbe":  udp(1, "sbe") + "|dir=" + cd.Dir(),
	}
}

// shmBase is where Aeron directories go: /dev/shm when there is one.
func shmBase() string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		return "/dev/shm"
	}
	return os.TempDir()
}

// TestPipelineAnyLength: a pipeline of 20,000 commands completes on every
// transport in both protocols, every reply in order and right. Over the
// ring a pipeline of more than 2 × 64 commands once never finished: the
// client wrote into a full request ring while the server waited for room
// in a reply ring nobody read. 20,000 (about 800 KB of requests) is 150
// times that, and more than a default socket buffer or Aeron term holds.
func TestPipelineAnyLength(t *testing.T) {
	onEveryTransport(t, pipelineAnyLength)
}

// pipelineAnyLength pipelines 20,000 commands to tgt and checks every reply.
func pipelineAnyLength(t *testing.T, name, tgt string) {
	const n = 20_000
	ctx, c := dialLong(t, tgt)
	// SET k v, GET k, PING, in turn; values vary in length.
	p := c.Pipeline()
	for i := range n {
		switch i % 3 {
		case 0:
			p.Do("SET", pipeKey(i/3), pipeValue(i/3))
		case 1:
			p.Do("GET", pipeKey(i/3))
		default:
			p.Do("PING")
		}
	}
	start := time.Now()
	vals, err := p.Exec(ctx)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("Exec of %d commands: %v", n, err)
	}
	if len(vals) != n {
		t.Fatalf("%d replies to %d commands", len(vals), n)
	}
	for i, v := range vals {
		var ok bool
		switch i % 3 {
		case 0:
			ok = v.Kind == KindStatus && string(v.Str) == "OK"
		case 1:
			ok = v.Kind == KindBulk && bytes.Equal(v.Str, pipeValue(i/3))
		default:
			ok = v.Kind == KindStatus && string(v.Str) == "PONG"
		}
		if !ok {
			t.Fatalf("reply %d: %v", i, v)
		}
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("PING after the pipeline: %v", err)
	}
	t.Logf("%s: %d pipelined commands in %v (%.0f/s)", name, n, took.Round(time.Millisecond), n/took.Seconds())
}

func pipeKey(i int) string { return "pipe:" + strconv.Itoa(i%1000) }

func pipeValue(i int) []byte {
	return bytes.Repeat([]byte{byte('a' + i%26)}, 1+i%97)
}

// valueSize is one row of TestValueSizes.
type valueSize struct {
	name string
	n    int
}

// valueSizes are the sizes TestValueSizes round-trips: empty, one byte,
// one ring record's payload and a byte either side, 1 MiB and the store's
// default maximum, and, per protocol, the values whose SET request or GET
// reply is exactly one record's payload and a byte either side, where a
// ring message starts to take two records.
func valueSizes(t *testing.T, sbeProto bool) []valueSize {
	rec := ring.LaidOutRecordSize(ring.DefaultRecordSize) - 8
	sizes := []valueSize{
		{"0B", 0}, {"1B", 1},
		{"record-1", rec - 1}, {"record", rec}, {"record+1", rec + 1},
		{"1MiB", 1 << 20}, {"16MiB", store.DefaultMaxValueLen},
	}
	return append(sizes, messageEdges(t, sbeProto, "record", rec)...)
}

// messageEdges are, per protocol, the values whose SET request or GET
// reply is exactly limit bytes long, and a byte either side.
func messageEdges(t *testing.T, sbeProto bool, name string, limit int) []valueSize {
	setLen, getLen := respSetLen, respGetLen
	if sbeProto {
		setLen, getLen = sbeSetLen, sbeGetLen
	}
	var sizes []valueSize
	for _, m := range []struct {
		what string
		f    func(int) int
	}{{"SET", setLen}, {"GET", getLen}} {
		v := valueForLen(t, m.f, limit)
		for d := -1; d <= 1; d++ {
			sizes = append(sizes, valueSize{fmt.Sprintf("%s=%s%+d", m.what, name, d), v + d})
		}
	}
	return sizes
}

// aeronValueSizes adds Aeron's edges to valueSizes: the messages exactly
// as long as a stream's maximum message (term length / 8: 512 KiB with the
// transport's 4 MiB terms), where chunking starts, and as a UDP receiver's
// window (128 KiB), past which a reader must consume a message's first
// fragments before the rest can come.
func aeronValueSizes(t *testing.T, sbeProto bool) []valueSize {
	sizes := valueSizes(t, sbeProto)
	sizes = append(sizes, messageEdges(t, sbeProto, "max-message", aeron.DefaultTermLength/8)...)
	return append(sizes, messageEdges(t, sbeProto, "rcv-window", 128<<10)...)
}

// valueKey is the key TestValueSizes writes.
const valueKey = "value-size"

// respSetLen and the others give the length of the message a value of n
// bytes makes: the SET request or the GET reply, RESP or SBE (unframed, as
// the ring carries it).
func respSetLen(n int) int { return setLen(&respCodec{}, n) }
func respGetLen(n int) int { return 1 + len(strconv.Itoa(n)) + 2 + n + 2 }
func sbeSetLen(n int) int {
	cd, _ := newSBECodec(false)
	return setLen(cd, n)
}
func sbeGetLen(n int) int {
	return sbe.ReplyLen(&command.Reply{Kind: command.Bulk, Value: make([]byte, n)})
}

// setLen encodes SET valueKey <n bytes> with the client's own codec.
func setLen(cd codec, n int) int {
	b, err := cd.appendRequest(nil, [][]byte{[]byte("SET"), []byte(valueKey), make([]byte, n)}, 1)
	if err != nil {
		panic(err)
	}
	return len(b)
}

// valueForLen finds the value length whose message is exactly target bytes.
func valueForLen(t *testing.T, msgLen func(int) int, target int) int {
	for n := max(0, target-200); n <= target; n++ { // a header is under 200 bytes
		if msgLen(n) == target {
			return n
		}
	}
	t.Fatalf("no value length makes a message of exactly %d bytes", target)
	return 0
}

// valuePattern fills a value of n bytes so that a byte moved, lost or
// repeated anywhere shows.
func valuePattern(n int) []byte {
	v := make([]byte, n)
	for i := range v {
		v[i] = byte(i*131 + i>>8 + n)
	}
	return v
}

// TestValueSizes: SET then GET of values of every size the store accepts
// by default round-trip byte for byte on every transport in both protocols.
// Over the ring a value larger than one record (16,376 bytes) once failed
// with "message too large"; over Aeron one longer than a stream's maximum
// message (512 KiB) did, and over Aeron UDP a reply longer than the
// client driver's receiver window (128 KiB) never came. The SET and GET
// times of the largest value are logged per transport.
func TestValueSizes(t *testing.T) {
	onEveryTransport(t, valueSizesOn)
}

// valueSizesOn is one row group of TestValueSizes: every size in turn over
// one client of tgt.
func valueSizesOn(t *testing.T, name, tgt string) {
	ctx, c := dialLong(t, tgt)
	sizes := valueSizes(t, c.t.Proto.String() == "sbe")
	if strings.HasPrefix(name, "aeron") {
		sizes = aeronValueSizes(t, c.t.Proto.String() == "sbe")
	}
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			val := valuePattern(sz.n)
			start := time.Now()
			if err := c.Set(ctx, valueKey, val, SetOptions{}); err != nil {
				t.Fatalf("SET of %d bytes: %v", sz.n, err)
			}
			set := time.Since(start)
			start = time.Now()
			got, err := c.Get(ctx, valueKey)
			get := time.Since(start)
			if err != nil {
				t.Fatalf("GET of %d bytes: %v", sz.n, err)
			}
			if !bytes.Equal(got, val) {
				t.Fatalf("GET of a %d-byte value returned %d bytes, first difference at %d",
					sz.n, len(got), firstDiff(got, val))
			}
			if sz.n == store.DefaultMaxValueLen {
				t.Logf("%s: %d-byte value: SET %v, GET %v", name, sz.n, set.Round(time.Microsecond), get.Round(time.Microsecond))
			}
		})
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("PING after the values: %v", err)
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestRingProtocol: a ring target that names no protocol speaks the
// server's, learnt in the handshake; one that names the other protocol
// fails at once, naming both and the fix (a mismatch once hung or misled).
// The time to
// fail is logged.
func TestRingProtocol(t *testing.T) {
	targets := startSocketsAndRings(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, p := range []string{"resp", "sbe"} {
		tg, err := transport.ParseTarget(targets["ring/"+p])
		if err != nil {
			t.Fatal(err)
		}
		bare := "ring://" + tg.Path + "?wait=yield"
		c, err := Dial(ctx, bare)
		if err != nil {
			t.Fatalf("%s: dial without proto: %v", p, err)
		}
		defer c.Close()
		if got := c.Target().Proto.String(); got != p {
			t.Errorf("%s: the client speaks %s", p, got)
		}
		if err := c.Set(ctx, "learnt", []byte(p), SetOptions{}); err != nil {
			t.Fatalf("%s: SET without proto: %v", p, err)
		}
		if v, err := c.Get(ctx, "learnt"); err != nil || string(v) != p {
			t.Fatalf("%s: GET without proto: %q %v", p, v, err)
		}
		other := "sbe"
		if p == "sbe" {
			other = "resp"
		}
		start := time.Now()
		_, err = Dial(ctx, "ring://"+tg.Path+"?proto="+other)
		took := time.Since(start)
		if err == nil {
			t.Fatalf("a %s client dialled a %s ring", other, p)
		}
		t.Logf("%s client on a %s ring refused in %v: %v", other, p, took.Round(time.Microsecond), err)
		for _, want := range []string{"speaks " + p, "client " + other, "?proto=" + p, "leave proto out"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the refusal %q does not say %q", err, want)
			}
		}
	}
}

// onEveryTransport runs check as a subtest on every transport, sockets and
// rings first, then Aeron IPC and UDP (which need the Java driver for the
// UDP server side), each in both protocols.
func onEveryTransport(t *testing.T, check func(t *testing.T, name, tgt string)) {
	targets := startSocketsAndRings(t)
	for _, name := range socketAndRingKeys {
		t.Run(name, func(t *testing.T) { check(t, name, targets[name]) })
	}
	t.Run("aeron", func(t *testing.T) {
		needAeron(t)
		targets := startAeron(t)
		for _, name := range aeronKeys {
			t.Run(name, func(t *testing.T) { check(t, name, targets[name]) })
		}
	})
}

// dialLong dials tgt for a long test (5 minutes, a minute to connect): the
// context and the client, both ended in t.Cleanup.
func dialLong(t *testing.T, tgt string) (context.Context, *Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	c, err := Options{DialTimeout: time.Minute}.Dial(ctx, tgt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return ctx, c
}
