package server

import (
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	ae "github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/internal/testkit/wiretest"
	"github.com/goblin-kv/goblin/transport/aeron"
)

// The constants and the table agree: the source indexes its values by
// type id minus AeronCounterBase, and every name is distinct.
func TestAeronCountersTable(t *testing.T) {
	names := map[string]bool{}
	for i, c := range AeronCounters {
		if c.TypeID != int32(AeronCounterBase+i) {
			t.Errorf("AeronCounters[%d] %q has type id %d, want %d", i, c.Name, c.TypeID, AeronCounterBase+i)
		}
		if c.TypeID < aeron.MinStatCounterType {
			t.Errorf("%q: type id %d is Aeron's", c.Name, c.TypeID)
		}
		if names[c.Name] {
			t.Errorf("name %q twice", c.Name)
		}
		names[c.Name] = true
	}
	if len(AeronCounters) != AeronCounterUsedMemory-AeronCounterBase+1 {
		t.Errorf("%d counters for %d constants", len(AeronCounters), AeronCounterUsedMemory-AeronCounterBase+1)
	}
}

// aeronCounterServer is a server with a Unix socket and an Aeron IPC
// listener (the in-process Go driver in a fresh directory), cycled by the
// test goroutine (the loop goroutine, then) until its stat counters show
// in the driver; it returns the server, the socket client and the
// directory.
func aeronCounterServer(t testing.TB) (*Server, int, string) {
	t.Helper()
	tmp := t.TempDir()
	sock, dir := filepath.Join(tmp, "g.sock"), filepath.Join(tmp, "aeron")
	s, err := New(Options{Listen: []string{"uds://" + sock, "aeron:ipc?dir=" + dir}, Idle: IdleSpin, SocketCheckEvery: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.loop.shutdown() })
	fd := wiretest.RawUnix(t, sock)
	t.Cleanup(func() { unix.Close(fd) })
	aeronCounterValues(t, s, dir, func(map[int32]int64) bool { return true })
	return s, fd, dir
}

// aeronCounterValues cycles s's loop, publishing each time, until the
// driver in dir lists every one of the server's counters, labelled for the
// default stream, and cond holds for their values (by type id); it returns
// them.
func aeronCounterValues(t testing.TB, s *Server, dir string, cond func(map[int32]int64) bool) map[int32]int64 {
	t.Helper()
	cnc, err := ae.OpenCnC(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer cnc.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s.loop.cycle()
		s.metrics.Publish()
		got := map[int32]int64{}
		cnc.Counters().ForEach(func(c ae.CounterInfo) bool {
			for _, st := range AeronCounters {
				if c.TypeID == st.TypeID && c.Label == aeron.CounterLabel(st.Name, "aeron:ipc", aeron.DefaultStream) {
					got[c.TypeID] = c.Value
				}
			}
			return true
		})
		if len(got) == len(AeronCounters) && cond(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("server counters in the driver after 60 s: %v", got)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// TestAeronCountersShowServerStats: requests on the socket listener show
// in the Aeron counters (they are server-wide), each counter with its own
// stat, and publishing them allocates nothing.
func TestAeronCountersShowServerStats(t *testing.T) {
	s, fd, dir := aeronCounterServer(t)
	buf := make([]byte, 256)
	const sets = 5
	for i := range sets {
		cycleRoundTrip(s.loop, fd, []byte("*3\r\n$3\r\nSET\r\n$1\r\n"+string(rune('a'+i))+"\r\n$1\r\nv\r\n"), buf)
	}
	cycleRoundTrip(s.loop, fd, []byte("*2\r\n$4\r\nINCR\r\n$1\r\na\r\n"), buf) // an error reply
	got := aeronCounterValues(t, s, dir, func(v map[int32]int64) bool { return v[AeronCounterRequests] == sets+1 })
	want := map[int32]int64{
		AeronCounterClients:       1,
		AeronCounterAccepted:      1,
		AeronCounterRejected:      0,
		AeronCounterDisconnects:   0,
		AeronCounterSlowConsumers: 0,
		AeronCounterRequests:      sets + 1,
		AeronCounterErrors:        1,
		AeronCounterKeys:          sets,
	}
	for id, v := range want {
		if got[id] != v {
			t.Errorf("counter type %d = %d, want %d", id, got[id], v)
		}
	}
	if got[AeronCounterBytesIn] < int64(sets*len("SETav")) || got[AeronCounterBytesOut] < int64(sets*len("+OK")) || got[AeronCounterUsedMemory] <= 0 {
		t.Errorf("bytes in %d, out %d, used memory %d", got[AeronCounterBytesIn], got[AeronCounterBytesOut], got[AeronCounterUsedMemory])
	}
	if a := testing.AllocsPerRun(100, s.metrics.Publish); a != 0 {
		t.Errorf("%v allocations per publish with Aeron counters", a)
	}
}

// BenchmarkMetricsPublishAeronCounters is a publish of a server with a
// socket and an Aeron IPC listener: every series, and the eleven Aeron
// counters in the driver's CnC.
func BenchmarkMetricsPublishAeronCounters(b *testing.B) {
	s, _, _ := aeronCounterServer(b)
	b.ReportAllocs()
	for b.Loop() {
		s.metrics.Publish()
	}
}
