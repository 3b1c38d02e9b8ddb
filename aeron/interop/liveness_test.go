package interop

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/driver"
)

// goVictimEnv names the Aeron directory when this test binary runs as the
// Go victim (runGoVictim) instead of running tests.
const goVictimEnv = "GOBLIN_INTEROP_GO_VICTIM_DIR"

// runGoVictim is the Go twin of Victim.java: a client with a subscription
// on stream 3, a counter and a concurrent publication on stream 2 that it
// publishes on until it is killed.
func runGoVictim(dir string) {
	c, err := aeron.Connect(aeron.Options{Dir: dir, DriverTimeout: 30 * time.Second})
	if err != nil {
		fmt.Println("FAIL", err)
		os.Exit(1)
	}
	sub, err1 := c.AddSubscription("aeron:ipc?term-length=64k", 3)
	ctr, err2 := c.AddCounter(1001, nil, "go victim counter")
	pub, err3 := c.AddPublication("aeron:ipc?term-length=64k", 2)
	if err1 != nil || err2 != nil || err3 != nil {
		fmt.Println("FAIL", err1, err2, err3)
		os.Exit(1)
	}
	for !pub.IsConnected() {
		time.Sleep(time.Millisecond)
	}
	fmt.Printf("READY client=%d counter=%d\n", c.ClientID(), ctr.ID())
	msg := make([]byte, 64)
	for {
		for pub.Offer(msg) < 0 {
			sub.Poll(func([]byte, *aeron.Header) {}, 10)
		}
		ctr.Add(1)
	}
}

// TestKilledClientsAreCleanedUp SIGKILLs a Java client and a Go client,
// each in the middle of publishing and holding a subscription and a
// counter: within the client liveness timeout (plus the publication
// unblock timeout for a claim the kill left open) their publications,
// subscriptions and counters are gone, the survivor sees their images
// become unavailable, and the survivor's own stream — which the victims'
// subscriptions held back — flows again.
func TestKilledClientsAreCleanedUp(t *testing.T) {
	j := needJava(t)
	d := startGoDriver(t, driver.Options{
		ClientLivenessTimeout:     5 * time.Second,
		PublicationUnblockTimeout: 7 * time.Second,
		TimerInterval:             100 * time.Millisecond,
	})
	var gone atomic.Int32
	survivor, err := aeron.Connect(aeron.Options{Dir: d.Dir(), DriverTimeout: 30 * time.Second,
		UnavailableImageHandler: func(*aeron.Image) { gone.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	defer survivor.Close()
	fromJava, _ := survivor.AddSubscription("aeron:ipc?term-length=64k", 1)
	fromGo, _ := survivor.AddSubscription("aeron:ipc?term-length=64k", 2)
	own, err := survivor.AddExclusivePublication("aeron:ipc?term-length=64k", 3)
	if err != nil {
		t.Fatal(err)
	}
	ownSub, err := survivor.AddSubscription("aeron:ipc?term-length=64k", 3)
	if err != nil {
		t.Fatal(err)
	}

	javaVictim := startProcIn(t, j, d.Dir(), "Victim", "stream=1", "subStream=3")
	javaClient := readyField(t, javaVictim.Output(), "client")
	goVictim := exec.Command(os.Args[0], "-test.run=^$")
	goVictim.Env = append(os.Environ(), goVictimEnv+"="+d.Dir())
	out, err := goVictim.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := goVictim.Start(); err != nil {
		t.Fatal(err)
	}
	defer goVictim.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "READY") {
		t.Fatalf("go victim: %q %v", line, err)
	}
	goClient := readyField(t, line, "client")

	// Both victims publish; the survivor reads both streams.
	n1, n2 := 0, 0
	waitFor(t, "messages from both victims", func() bool {
		n1 += fromJava.Poll(func([]byte, *aeron.Header) {}, 100)
		n2 += fromGo.Poll(func([]byte, *aeron.Header) {}, 100)
		return n1 > 100 && n2 > 100
	})
	owned := func(client int64) int {
		n := 0
		survivor.Counters().ForEach(func(c aeron.CounterInfo) bool {
			if c.OwnerID == client || (c.TypeID == aeron.CounterTypeClientHeartbeat && c.RegistrationID == client) {
				n++
			}
			return true
		})
		return n
	}
	if owned(javaClient) != 5 || owned(goClient) != 5 {
		t.Fatalf("victims own %d and %d counters, want 5 each (heartbeat, counter, pub-pos, pub-lmt, sub-pos)",
			owned(javaClient), owned(goClient))
	}
	killed := time.Now()
	javaVictim.Kill()
	goVictim.Process.Kill()
	goVictim.Wait()

	waitFor(t, "the victims' resources to go", func() bool {
		fromJava.Poll(func([]byte, *aeron.Header) {}, 100)
		fromGo.Poll(func([]byte, *aeron.Header) {}, 100)
		return owned(javaClient) == 0 && owned(goClient) == 0 && gone.Load() == 2 &&
			fromJava.ImageCount() == 0 && fromGo.ImageCount() == 0
	})
	t.Logf("cleaned up %v after the kill (client liveness timeout 5s, unblock timeout 7s)", time.Since(killed).Round(time.Millisecond))
	if n := survivor.Counters().Value(24); n != 2 {
		t.Errorf("client timeouts counter %d, want 2", n)
	}
	// The survivor's own stream, once held back by the dead subscribers,
	// flows: more than a whole term goes through.
	sent, got := 0, 0
	waitFor(t, "the survivor's stream", func() bool {
		if own.Offer(make([]byte, 96)) > 0 {
			sent++
		}
		got += ownSub.Poll(func([]byte, *aeron.Header) {}, 100)
		return got > 1024
	})
}

func readyField(t *testing.T, out, key string) int64 {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "READY") {
			v, err := strconv.ParseInt(ParseFields(l)[key], 10, 64)
			if err != nil {
				t.Fatalf("no %s= in %q", key, l)
			}
			return v
		}
	}
	t.Fatalf("no READY line in %q", out)
	return 0
}
