package interop

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron/driver"
	"github.com/goblin-kv/goblin/aeron/javadriver"
)

// freePortRun finds n consecutive UDP ports on 127.0.0.1 free now, below
// the kernel's ephemeral range.
func freePortRun(t *testing.T, n int) int {
	t.Helper()
	for base := 21000 + int(time.Now().UnixNano()%5000); base < 32000; base += n {
		ok := true
		for p := base; p < base+n && ok; p++ {
			c, err := net.ListenPacket("udp4", fmt.Sprintf("127.0.0.1:%d", p))
			if err != nil {
				ok = false
				continue
			}
			c.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatalf("no run of %d free UDP ports", n)
	return 0
}

// TestWildcardPortRangeJavaClient: the unchanged Java client runs Aeron's
// WildcardPortManagerSystemTest steps (the "wildcardports" scenario) on
// goblin's Go driver and, in the same run, on the Java driver, each
// started with a receiver wildcard port range of two ports and a sender
// range of one: subscriptions at port 0 resolve to the range's ports in
// order, the full range is refused with the same error code and text, and
// freed ports are given out again.
func TestWildcardPortRangeJavaClient(t *testing.T) {
	j := needJava(t)
	base := freePortRun(t, 6)
	goDrv := startGoDriver(t, driver.Options{
		ReceiverWildcardPortRange: fmt.Sprintf("%d %d", base, base+1),
		SenderWildcardPortRange:   fmt.Sprintf("%d %d", base+2, base+2),
	})
	javaDrv := startDriver(t, javadriver.Options{Properties: map[string]string{
		"aeron.receiver.wildcard.port.range": fmt.Sprintf("%d %d", base+3, base+4),
		"aeron.sender.wildcard.port.range":   fmt.Sprintf("%d %d", base+5, base+5),
	}})
	full := map[string]string{}
	for drv, b := range map[string]int{"go": base, "java": base + 3} {
		dir := goDrv.Dir()
		if drv == "java" {
			dir = javaDrv.Dir()
		}
		l := runScenarios(t, j, dir, "scenarios=wildcardports", fmt.Sprintf("wildcardBase=%d", b))["wildcardports"]
		if !strings.HasPrefix(l, "PASS") {
			t.Fatalf("%s driver: %q", drv, l)
		}
		t.Logf("%s driver: %s", drv, l)
		full[drv] = l[strings.Index(l, "full="):]
	}
	if full["go"] != full["java"] {
		t.Fatalf("refusals differ: go %s, java %s", full["go"], full["java"])
	}
}
