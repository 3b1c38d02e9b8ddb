package interop

import (
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/driver"
	"github.com/goblin-kv/goblin/aeron/javadriver"
)

// TestMediaTimestampsJavaClient: the unchanged Java client's
// "mediatimestamps" scenario (media-rcv-ts-offset=reserved, the C driver's
// kernel receive time, beside a channel send stamp, then fragmented
// messages intact) passes on goblin's Go driver; on the Java driver, in the
// same run, it fails with the Java driver's refusal ("Media timestamps …
// are not supported in the Java driver"), as Aeron's TimestampingSystemTest
// expects of each.
func TestMediaTimestampsJavaClient(t *testing.T) {
	j := needJava(t)
	godrv := startGoDriver(t, driver.Options{IPCTermLength: 64 << 10, Idle: aeron.SleepIdle{Period: 100 * time.Microsecond}})
	javadrv := startDriver(t, javadriver.Options{IPCTermLength: 64 << 10})
	onGo := runScenarios(t, j, godrv.Dir(), "scenarios=mediatimestamps")
	if l := onGo["mediatimestamps"]; !strings.HasPrefix(l, "PASS") {
		t.Fatalf("Go driver: %q, want PASS", l)
	} else {
		t.Logf("Go driver: %s", l)
	}
	onJava := runScenarios(t, j, javadrv.Dir(), "scenarios=mediatimestamps")
	if l := onJava["mediatimestamps"]; !strings.HasPrefix(l, "FAIL") || !strings.Contains(l, "not supported in the Java driver") {
		t.Fatalf("Java driver: %q, want its refusal of media-rcv-ts-offset", l)
	}
}
