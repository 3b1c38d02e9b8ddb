package driver

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/internal/cnc"
	"github.com/goblin-kv/goblin/aeron/internal/counters"
	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/aeron/internal/ringbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
)

// TestCnCLayout checks cnc.dat as the real drivers lay it out: metadata,
// sections, system counters 0..45 with their ids, types, labels and the
// version counters, the heartbeat and the first correlation id.
func TestCnCLayout(t *testing.T) {
	o := testOptions(t)
	d, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	data, err := os.ReadFile(filepath.Join(d.Dir(), cnc.FileName))
	if err != nil {
		t.Fatal(err)
	}
	l, meta, err := cnc.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if v := shm.GetInt32(data, cnc.VersionOffset); v != 0x200 {
		t.Fatalf("version %#x", v)
	}
	want := cnc.Lengths{ToDriver: 1<<20 + 768, ToClients: 1<<20 + 128, CountersMeta: 4 << 20, CountersValues: 1 << 20, ErrorLog: 4 << 20}
	if l != want || len(data) != l.FileLength(4096) {
		t.Fatalf("lengths %+v, file %d", l, len(data))
	}
	if meta.ClientLivenessTimeoutNs != int64(10*time.Second) || meta.PID != int64(os.Getpid()) || meta.FilePageSize != 4096 ||
		time.Since(time.UnixMilli(meta.StartTimestampMs)) > time.Minute {
		t.Fatalf("metadata %+v", meta)
	}
	s := l.Slice(data)
	rb, _ := ringbuffer.New(s.ToDriver)
	if hb := rb.ConsumerHeartbeat(); time.Since(time.UnixMilli(hb)) > time.Minute {
		t.Fatalf("heartbeat %d", hb)
	}
	if id := rb.NextCorrelationID(); id != 1 {
		t.Fatalf("first correlation id %d, want 1", id)
	}
	r := counters.NewReader(s.CountersMeta, s.CountersValues)
	for id := int32(0); id < numSystemCounters; id++ {
		if r.State(id) != counters.StateAllocated || r.TypeID(id) != 0 || r.RegistrationID(id) != int64(id) ||
			r.OwnerID(id) != -1 || shm.GetInt32(r.Key(id), 0) != id {
			t.Fatalf("system counter %d: state %d type %d reg %d owner %d", id, r.State(id), r.TypeID(id), r.RegistrationID(id), r.OwnerID(id))
		}
	}
	labels := map[int32]string{
		0:  "Bytes sent",
		15: "Errors: version=1.51.0 commit=goblin@",
		24: "Client liveness timeouts",
		25: "Resolution changes",
		26: "Conductor max cycle time doing its work in ns: INVOKER",
		27: "Conductor work cycle exceeded threshold count: threshold=100ms INVOKER",
		34: "Aeron software: version=1.51.0 commit=goblin@",
		43: "Control protocol version",
		45: "Failed offers to AsyncExecutorProxy",
	}
	for id, prefix := range labels {
		if !strings.HasPrefix(r.Label(id), prefix) {
			t.Errorf("counter %d label %q, want %q", id, r.Label(id), prefix)
		}
	}
	if r.Value(43) != 0x10000 || r.Value(34) != 0x013300 {
		t.Fatalf("version counters %#x %#x", r.Value(43), r.Value(34))
	}
	if mapped := r.Value(sysBytesCurrentlyMapped); mapped != int64(len(data)+1<<20) {
		t.Fatalf("bytes mapped %d", mapped)
	}
	if r.State(numSystemCounters) != counters.StateUnused {
		t.Fatal("counters beyond the system counters")
	}
	if st, err := os.Stat(filepath.Join(d.Dir(), LossReportFile)); err != nil || st.Size() != 1<<20 {
		t.Fatalf("loss report: %v", err)
	}
	// Close marks the CnC shut down for clients.
	d.Close()
	data, _ = os.ReadFile(filepath.Join(o.Dir, cnc.FileName))
	rb, _ = ringbuffer.New(cnc.Lengths.Slice(l, data).ToDriver)
	if rb.ConsumerHeartbeat() != -1 {
		t.Fatal("heartbeat not -1 after Close")
	}
}

// TestFilesArePrivate: 0700 directories and 0600 files, whatever the
// umask allows.
func TestFilesArePrivate(t *testing.T) {
	d := startDriver(t, testOptions(t))
	c := connectClient(t, d)
	if _, err := c.AddExclusivePublication(ipc64k, 1); err != nil {
		t.Fatal(err)
	}
	n := 0
	filepath.WalkDir(d.Dir(), func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		st, _ := e.Info()
		want := fs.FileMode(0o600)
		if e.IsDir() {
			want = 0o700
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", p, st.Mode().Perm(), want)
		}
		n++
		return nil
	})
	if n != 6 { // dir, cnc.dat, loss-report.dat, publications/, its log, images/
		t.Fatalf("%d entries", n)
	}
}

// TestRefusesLiveDriversDirectory: a second driver may not take a live
// driver's directory; a dead driver's is cleaned, its errors saved.
func TestRefusesLiveDriversDirectory(t *testing.T) {
	o := testOptions(t)
	first := startDriver(t, o)
	_, err := New(o)
	if !errors.Is(err, ErrActiveDriver) || !strings.Contains(err.Error(), filepath.Join(o.Dir, "cnc.dat")) {
		t.Fatalf("second driver: %v", err)
	}
	// Leave an error in the log, then let the heartbeat go stale as if
	// the driver had been killed.
	c := connectClient(t, first)
	if _, err := c.AddSubscription("aeron:udp?endpoint=localhost:1|control=localhost:0", 1); err == nil {
		t.Fatal("UDP subscription with control port 0 accepted")
	}
	first.runner.stop()
	first.ring.SetConsumerHeartbeat(time.Now().Add(-time.Hour).UnixMilli())
	var warnings []string
	o.Warn = func(s string) { warnings = append(warnings, s) }
	second, err := New(o)
	if err != nil {
		t.Fatalf("driver over a dead one's directory: %v", err)
	}
	defer second.Close()
	saved, _ := filepath.Glob(strings.TrimRight(o.Dir, "/") + "-*-error.log")
	if len(saved) != 1 || len(warnings) != 1 || !strings.Contains(warnings[0], "Existing errors saved to: "+saved[0]) {
		t.Fatalf("saved %v, warnings %q", saved, warnings)
	}
	b, _ := os.ReadFile(saved[0])
	if !strings.Contains(string(b), "control has port=0 for subscription") || !strings.Contains(string(b), "1 distinct errors observed.") {
		t.Fatalf("saved errors:\n%s", b)
	}
	if st, _ := os.Stat(saved[0]); st.Mode().Perm() != 0o600 {
		t.Fatalf("saved errors mode %v", st.Mode().Perm())
	}
}

// TestLogBufferMetadata checks the fields of a new publication's log.
func TestLogBufferMetadata(t *testing.T) {
	m := newManualDriver(t, Options{})
	c := newRawClient(m)
	corr := c.addPublication("aeron:ipc?term-length=128k|mtu=2048|linger=7ms|sparse=false|init-term-id=10|term-id=12|term-offset=4096|tags=1,99", 5, true)
	c.take()
	p := m.ipcPublications[0]
	meta := p.log.meta
	st, _ := os.Stat(p.log.path)
	checks := []struct {
		name      string
		got, want int64
	}{
		{"file length", st.Size(), 3*128<<10 + 4096},
		{"term length", int64(shm.GetInt32(meta, logbuffer.TermLengthOffset)), 128 << 10},
		{"mtu", int64(shm.GetInt32(meta, logbuffer.MTULengthOffset)), 2048},
		{"page size", int64(shm.GetInt32(meta, logbuffer.PageSizeOffset)), 4096},
		{"initial term id", int64(shm.GetInt32(meta, logbuffer.InitialTermIDOffset)), 10},
		{"correlation id", shm.GetInt64(meta, logbuffer.CorrelationIDOffset), corr},
		{"window", int64(shm.GetInt32(meta, logbuffer.PublicationWindowLengthOffset)), 64 << 10},
		{"linger", shm.GetInt64(meta, logbuffer.LingerTimeoutOffset), int64(7 * time.Millisecond)},
		{"sparse", int64(meta[logbuffer.SparseOffset]), 0},
		{"signal eos", int64(meta[logbuffer.SignalEOSOffset]), 1},
		{"tether", int64(meta[logbuffer.TetherOffset]), 0},
		{"type", int64(meta[logbuffer.TypeOffset]), int64(logbuffer.TypeExclusive)},
		{"entity tag", shm.GetInt64(meta, logbuffer.EntityTagOffset), 99},
		{"response correlation id", shm.GetInt64(meta, logbuffer.ResponseCorrelationIDOffset), -1},
		{"end of stream", shm.GetInt64(meta, logbuffer.EndOfStreamPositionOffset), 1<<63 - 1},
		{"active term count", int64(shm.GetInt32(meta, logbuffer.ActiveTermCountOffset)), 2},
		{"active tail", shm.GetInt64(meta, logbuffer.TermTailCountersOffset+16), logbuffer.PackTail(12, 4096)},
		{"next tail", shm.GetInt64(meta, logbuffer.TermTailCountersOffset), logbuffer.PackTail(10, 0)},
		{"default header term offset", int64(shm.GetInt32(meta, logbuffer.DefaultFrameHeaderOffset+logbuffer.FrameTermOffsetOffset)), 4096},
		{"default header flags", int64(meta[logbuffer.DefaultFrameHeaderOffset+logbuffer.FrameFlagsOffset]), 0xC0},
		{"default header stream", int64(shm.GetInt32(meta, logbuffer.DefaultFrameHeaderOffset+logbuffer.FrameStreamIDOffset)), 5},
		{"pub-pos", m.counters.Value(p.pubPos.id), 2*128<<10 + 4096},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if st.Sys() == nil {
		t.Skip("no block count")
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
	}{
		{"liveness not above timer", Options{TimerInterval: time.Second, ClientLivenessTimeout: time.Second}},
		{"unblock not above liveness", Options{PublicationUnblockTimeout: 5 * time.Second}},
		{"term length", Options{IPCTermLength: 100000}},
		{"mtu", Options{IPCMTU: 1000}},
		{"threading mode", Options{ThreadingMode: "FAST"}},
		{"private to nobody", Options{DirPerm: 0o500}},
	} {
		tc.o.EnsureDefaults()
		if err := tc.o.Validate(); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	var o Options
	o.EnsureDefaults()
	if err := o.Validate(); err != nil || o.Dir != aeron.DefaultDir() {
		t.Fatalf("defaults: %v", err)
	}
}
