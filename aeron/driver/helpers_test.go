package driver

import (
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
)

// testOptions keeps a test driver small: 64 KiB IPC terms and 1 MiB of
// counters, in a temporary directory.
func testOptions(t testing.TB) Options {
	return Options{
		Dir:                  t.TempDir() + "/aeron",
		IPCTermLength:        64 << 10,
		CountersBufferLength: 1 << 20,
		Idle:                 aeron.SleepIdle{Period: 100 * time.Microsecond},
	}
}

func startDriver(t testing.TB, o Options) *Driver {
	t.Helper()
	d, err := Start(o)
	if err != nil {
		t.Fatalf("start driver: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func connectClient(t testing.TB, d *Driver) *aeron.Client {
	t.Helper()
	c, err := aeron.Connect(aeron.Options{Dir: d.Dir(), DriverTimeout: 20 * time.Second})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
