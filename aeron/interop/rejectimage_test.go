package interop

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/driver"
	"github.com/goblin-kv/goblin/aeron/javadriver"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// TestJavaClientRejectsUDPImage: the unchanged Java client's
// "rejectimage" scenario (a subscriber's Image.reject on a UDP image, as
// in Aeron's RejectImageTest) on a fresh Go driver and, in the same run, a
// fresh Java driver. On both the rejected image, the error frame sent and
// received and the errors counter (15) move — the Java and C drivers count
// a publication's error frame as an error; Aeron 1.51.0's own
// RejectImageTest.shouldRejectSubscriptionsImage waits for that counter —
// and the Go driver's CnC error log names it as onPublicationError with
// the subscriber's reason.
func TestJavaClientRejectsUDPImage(t *testing.T) {
	j := needJava(t)
	godrv := startGoDriver(t, driver.Options{IPCTermLength: 64 << 10, Idle: aeron.SleepIdle{Period: 100 * time.Microsecond}})
	javadrv := startDriver(t, javadriver.Options{IPCTermLength: 64 << 10})
	// Each driver on a UDP port of its own, free when picked: a port the
	// first driver's endpoint still holds, or another test's, would refuse
	// the second's subscription with "Address already in use".
	for _, d := range []struct{ name, dir string }{{"go", godrv.Dir()}, {"java", javadrv.Dir()}} {
		port := fmt.Sprintf("rejectPort=%d", testproc.FreeUDPPort(t))
		if l := runScenarios(t, j, d.dir, "scenarios=rejectimage", port)["rejectimage"]; !strings.HasPrefix(l, "PASS") {
			t.Errorf("%s driver: %q, want PASS", d.name, l)
		} else {
			t.Logf("%s driver: %s", d.name, l)
		}
	}
	c, err := aeron.Connect(aeron.Options{Dir: godrv.Dir()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var texts []string
	logged := false
	c.ReadErrors(0, func(r aeron.ErrorRecord) {
		texts = append(texts, r.Text)
		logged = logged || strings.Contains(r.Text, "onPublicationError") && strings.Contains(r.Text, "goblin rejects the image")
	})
	if !logged {
		t.Errorf("the Go driver's error log has no onPublicationError naming the reject's reason; it has %q", texts)
	}
}
