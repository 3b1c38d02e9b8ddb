package aeron

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron/internal/broadcast"
	"github.com/goblin-kv/goblin/aeron/internal/cnc"
	"github.com/goblin-kv/goblin/aeron/internal/counters"
	"github.com/goblin-kv/goblin/aeron/internal/ringbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
)

// fakeCnC lays out a minimal cnc.dat the way the driver does.
func fakeCnC(version int32, heartbeat int64) []byte {
	l := cnc.Lengths{
		ToDriver:       1024 + ringbuffer.TrailerLength,
		ToClients:      1024 + broadcast.TrailerLength,
		CountersMeta:   4 * counters.MetadataLength,
		CountersValues: 4 * counters.ValueLength,
		ErrorLog:       1024,
	}
	b := make([]byte, cnc.MetadataLength+l.Sum())
	cnc.FillMetadata(b, l, cnc.Metadata{ClientLivenessTimeoutNs: int64(10 * time.Second), PID: 4242})
	shm.PutInt64(b, cnc.MetadataLength+l.ToDriver-ringbuffer.TrailerLength+ringbuffer.ConsumerHeartbeatOffset, heartbeat)
	shm.PutInt32(b, cnc.VersionOffset, version)
	return b
}

func TestCnCVersionCheck(t *testing.T) {
	for _, v := range []int32{0x100, 0x10200, 0x20000} {
		if _, err := parseCnC(fakeCnC(v, 1)); !errors.Is(err, ErrCnCVersion) {
			t.Errorf("version %#x: %v", v, err)
		}
	}
	c, err := parseCnC(fakeCnC(0x301, 7)) // a newer minor version is compatible
	if err != nil {
		t.Fatal(err)
	}
	if c.DriverPID() != 4242 || c.DriverHeartbeat() != 7 || c.ClientLivenessTimeout() != 10*time.Second {
		t.Fatalf("pid %d heartbeat %d liveness %v", c.DriverPID(), c.DriverHeartbeat(), c.ClientLivenessTimeout())
	}
	if _, err := parseCnC(fakeCnC(0, 1)); !errors.Is(err, ErrDriverTimeout) {
		t.Fatalf("unready file: %v", err)
	}
	short := fakeCnC(cnc.Version, 1)
	if _, err := parseCnC(short[:len(short)-1]); err == nil {
		t.Fatal("accepted a truncated file")
	}
}

func TestConnectRefusesStaleOrIncompatibleDriver(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, CnCFile)
	// A CnC whose driver died long ago: Connect waits, then times out.
	if err := os.WriteFile(path, fakeCnC(cnc.Version, 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Connect(Options{Dir: dir, DriverTimeout: 300 * time.Millisecond}); !errors.Is(err, ErrDriverTimeout) {
		t.Fatalf("stale driver: %v", err)
	}
	if err := os.WriteFile(path, fakeCnC(0x10200, time.Now().UnixMilli()), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Connect(Options{Dir: dir, DriverTimeout: 300 * time.Millisecond}); !errors.Is(err, ErrCnCVersion) {
		t.Fatalf("incompatible driver: %v", err)
	}
}

func TestDefaultDir(t *testing.T) {
	t.Setenv("AERON_DIR", "/somewhere/else")
	if DefaultDir() != "/somewhere/else" {
		t.Fatal("AERON_DIR ignored")
	}
	t.Setenv("AERON_DIR", "")
	t.Setenv("USER", "gopher")
	if d := DefaultDir(); filepath.Base(d) != "aeron-gopher" {
		t.Fatalf("default dir %s", d)
	}
}
