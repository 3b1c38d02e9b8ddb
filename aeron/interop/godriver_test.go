package interop

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/driver"
	"github.com/goblin-kv/goblin/aeron/javadriver"
)

// startGoDriver runs goblin's Go media driver (package aeron/driver) in
// this test process on its own goroutine, in a private directory, with
// small IPC terms.
func startGoDriver(t testing.TB, o driver.Options) *driver.Driver {
	t.Helper()
	if o.Dir == "" {
		o.Dir = shmTempDir(t) + "/aeron"
	}
	if o.CountersBufferLength == 0 {
		o.CountersBufferLength = 1 << 20
	}
	d, err := driver.Start(o)
	if err != nil {
		t.Fatalf("start Go driver: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// runScenarios runs the DriverScenarios Java program against the driver
// in dir and returns its PASS/FAIL lines by scenario.
func runScenarios(t *testing.T, j *Java, dir string, args ...string) map[string]string {
	t.Helper()
	p, err := j.Start(context.Background(), dir, "DriverScenarios", args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	if _, err := p.Result(ioTimeout); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(); err != nil {
		t.Logf("DriverScenarios output:\n%s", p.Output())
	}
	results := map[string]string{}
	for _, l := range strings.Split(p.Output(), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && (f[0] == "PASS" || f[0] == "FAIL") {
			results[f[1]] = l
		}
	}
	return results
}

// TestJavaClientOnGoDriver runs the unchanged Java client's scenarios
// (publications of both kinds, tryClaim, fragments up to the max message
// length, controlled poll, counters, IPC response channels, image
// unavailable, error codes, session ids; on UDP a busy port then freed,
// tags mismatches refused, so-rcvbuf equal to the default, a
// multi-destination subscription over two destinations of a manual MDC
// publication with one removed mid-stream, channel send and receive
// timestamps, merged MDS: two publications of one session feeding one
// image through two destinations) against goblin's Go driver and,
// in the same run, against the Java driver, and demands the same outcome:
// every scenario passes on both, with the same error codes.
func TestJavaClientOnGoDriver(t *testing.T) {
	t.Parallel() // its own drivers, ports and Java peers; it times nothing
	j := needJava(t)
	godrv := startGoDriver(t, driver.Options{IPCTermLength: 64 << 10, Idle: aeron.SleepIdle{Period: 100 * time.Microsecond}})
	javadrv := startDriver(t, javadriver.Options{IPCTermLength: 64 << 10})
	got := map[string]map[string]string{
		"go":   runScenarios(t, j, godrv.Dir()),
		"java": runScenarios(t, j, javadrv.Dir()),
	}
	for _, drv := range []string{"go", "java"} {
		if len(got[drv]) != 16 {
			t.Errorf("%s driver: %d scenarios reported, want 16", drv, len(got[drv]))
		}
		for name, line := range got[drv] {
			if !strings.HasPrefix(line, "PASS") {
				t.Errorf("%s driver: %s: %s", drv, name, line)
			} else {
				t.Logf("%s driver: %s", drv, line)
			}
		}
	}
	// Details that do not depend on random ids must agree.
	for _, name := range []string{"errors", "controlled", "fragments", "concurrent", "exclusive", "unavailable", "mds", "timestamps", "mergedmds"} {
		if g, j := got["go"][name], got["java"][name]; g != j {
			t.Errorf("%s differs:\n  go driver:   %s\n  java driver: %s", name, g, j)
		}
	}
}
