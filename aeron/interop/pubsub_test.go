package interop

import (
	"strconv"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/javadriver"
)

// flow is one stream shape the interop tests push across.
type flow struct {
	name      string
	size      int // bytes per message
	count     int
	term      int // publication term length; the max message is term/8
	exclusive bool
}

var flows = []flow{
	// Unfragmented, through many term rotations of a 64 KiB term.
	{name: "100B", size: 100, count: 5000, term: 64 << 10},
	// The largest message a 64 KiB term allows (term/8), in MTU fragments.
	{name: "8KiB", size: 8 << 10, count: 300, term: 64 << 10, exclusive: true},
	// 10 KiB and 100 KiB messages need a longer term (1 MiB: max 128 KiB).
	{name: "10KiB", size: 10 << 10, count: 200, term: 1 << 20},
	{name: "100KiB", size: 100 << 10, count: 40, term: 1 << 20, exclusive: true},
}

// media is a pair of channels for one transport: what the publisher and the
// subscriber name, and whether Go and Java sit on separate drivers.
type media struct {
	name       string
	twoDrivers bool
	pub, sub   func(t *testing.T, port int, f flow) string
}

var medias = []media{
	{
		name: "ipc",
		pub: func(t *testing.T, _ int, f flow) string {
			return aeron.IPC().TermLength(f.term).String()
		},
		sub: func(*testing.T, int, flow) string { return "aeron:ipc" },
	},
	{
		// UDP loopback between two drivers, as two hosts would run it.
		name:       "udp",
		twoDrivers: true,
		pub: func(t *testing.T, port int, f flow) string {
			return aeron.UDP().Endpoint(loopback(port)).TermLength(f.term).String()
		},
		sub: func(t *testing.T, port int, _ flow) string {
			return aeron.UDP().Endpoint(loopback(port)).String()
		},
	},
}

// flowCase is one medium and flow of the publish/subscribe tests: the
// Java tools, the Go client on its driver, the Java side's driver, and the
// stream and UDP port of the case.
type flowCase struct {
	j       *Java
	m       media
	f       flow
	c       *aeron.Client
	javaDrv *javadriver.Driver
	stream  int32
	port    int
}

// eachFlow runs test for every medium and flow, Go and Java each on the
// driver the medium gives them, with streams numbered from firstStream.
func eachFlow(t *testing.T, firstStream int32, test func(t *testing.T, fc flowCase)) {
	j := needJava(t)
	for _, m := range medias {
		t.Run(m.name, func(t *testing.T) {
			goDrv, javaDrv := drivers(t, m)
			c := connect(t, goDrv, aeron.Options{})
			for i, f := range flows {
				t.Run(f.name, func(t *testing.T) {
					test(t, flowCase{j: j, m: m, f: f, c: c, javaDrv: javaDrv,
						stream: firstStream + int32(i), port: testproc.FreeUDPPort(t)})
				})
			}
		})
	}
}

// drivers starts the driver(s) a medium needs: the Go side uses the first,
// the Java side the second (the same one for IPC).
func drivers(t *testing.T, m media) (goSide, javaSide *javadriver.Driver) {
	goSide = startDriver(t, javadriver.Options{})
	if !m.twoDrivers {
		return goSide, goSide
	}
	return goSide, startDriver(t, javadriver.Options{})
}

// TestGoPublishesJavaSubscribes: the Go client publishes, the Java client's
// Subscriber checks every byte of every message.
func TestGoPublishesJavaSubscribes(t *testing.T) {
	t.Parallel() // its own drivers, ports and Java peers; it times nothing
	eachFlow(t, 1100, func(t *testing.T, fc flowCase) {
		j, m, f, c, javaDrv, stream, port := fc.j, fc.m, fc.f, fc.c, fc.javaDrv, fc.stream, fc.port
		sub := startProc(t, j, javaDrv, "Subscriber",
			"channel="+m.sub(t, port, f), "stream="+strconv.Itoa(int(stream)),
			"count="+strconv.Itoa(f.count), "size="+strconv.Itoa(f.size), "timeoutMs=120000")
		pub := addPub(t, c, m.pub(t, port, f), stream, f.exclusive)
		testkit.Eventually(t, ioTimeout, "the Java subscriber to connect", func() (bool, string) { return pub.IsConnected(), "" })
		msg := make([]byte, f.size)
		for seq := 0; seq < f.count; seq++ {
			Fill(msg, int64(seq))
			offer(t, pub, msg)
		}
		res, err := sub.Result(ioTimeout)
		if err != nil {
			t.Fatal(err)
		}
		checkCounts(t, res, "received", f)
		if err := sub.Wait(); err != nil {
			t.Fatalf("Java Subscriber: %v\n%s", err, sub.Output())
		}
	})
}

// TestJavaPublishesGoSubscribes: the Java client's Publisher sends, the Go
// client reassembles and checks every byte.
func TestJavaPublishesGoSubscribes(t *testing.T) {
	t.Parallel() // its own drivers, ports and Java peers; it times nothing
	eachFlow(t, 1200, func(t *testing.T, fc flowCase) {
		j, m, f, c, javaDrv, stream, port := fc.j, fc.m, fc.f, fc.c, fc.javaDrv, fc.stream, fc.port
		sub, err := c.AddSubscription(m.sub(t, port, f), stream)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		pub := startProc(t, j, javaDrv, "Publisher",
			"channel="+m.pub(t, port, f), "stream="+strconv.Itoa(int(stream)),
			"count="+strconv.Itoa(f.count), "size="+strconv.Itoa(f.size),
			"exclusive="+strconv.FormatBool(f.exclusive), "timeoutMs=120000")

		got, bad := 0, 0
		asm := aeron.NewFragmentAssembler(func(b []byte, _ *aeron.Header) {
			if len(b) != f.size {
				if bad++; bad < 10 {
					t.Errorf("message %d: %d bytes, want %d", got, len(b), f.size)
				}
			} else if k := Check(b, int64(got)); k >= 0 {
				if bad++; bad < 10 {
					t.Errorf("message %d: byte %d breaks the pattern", got, k)
				}
			}
			got++
		}, 0)
		handler := asm.OnFragment
		deadline := time.Now().Add(ioTimeout)
		for got < f.count {
			if sub.Poll(handler, 64) == 0 {
				if time.Now().After(deadline) {
					t.Fatalf("received %d of %d messages", got, f.count)
				}
				time.Sleep(50 * time.Microsecond)
			}
		}
		if bad > 0 {
			t.Fatalf("%d of %d messages corrupt", bad, got)
		}
		res, err := pub.Result(ioTimeout)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := Int(res, "sent"); n != int64(f.count) {
			t.Fatalf("Java sent %d, want %d", n, f.count)
		}
		if err := pub.Stop(ioTimeout); err != nil {
			t.Fatalf("Java Publisher: %v", err)
		}
		// Nothing extra arrived after the last message.
		sub.Poll(handler, 64)
		if got != f.count {
			t.Fatalf("after the publisher closed: %d messages, want %d", got, f.count)
		}
	})
}

func checkCounts(t *testing.T, res map[string]string, key string, f flow) {
	t.Helper()
	n, err := Int(res, key)
	if err != nil {
		t.Fatal(err)
	}
	errs, err := Int(res, "errors")
	if err != nil {
		t.Fatal(err)
	}
	bytes, err := Int(res, "bytes")
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(f.count) || errs != 0 || bytes != int64(f.count*f.size) {
		t.Fatalf("Java %s=%d bytes=%d errors=%d; want %d messages, %d bytes, 0 errors",
			key, n, bytes, errs, f.count, f.count*f.size)
	}
}
