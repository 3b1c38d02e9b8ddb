package interop

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math/bits"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/driver"
	"github.com/goblin-kv/goblin/internal/testkit"
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
	if err := testkit.Poll(time.Minute, "the victim's publication to connect", func() (bool, string) { return pub.IsConnected(), "" }); err != nil {
		fmt.Println("FAIL", err)
		os.Exit(1)
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
	testkit.Eventually(t, ioTimeout, "messages from both victims", func() (bool, string) {
		n1 += fromJava.Poll(func([]byte, *aeron.Header) {}, 100)
		n2 += fromGo.Poll(func([]byte, *aeron.Header) {}, 100)
		return n1 > 100 && n2 > 100, ""
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

	testkit.Eventually(t, ioTimeout, "the victims' resources to go", func() (bool, string) {
		fromJava.Poll(func([]byte, *aeron.Header) {}, 100)
		fromGo.Poll(func([]byte, *aeron.Header) {}, 100)
		var b strings.Builder
		for _, v := range []struct {
			name   string
			client int64
		}{{"java victim", javaClient}, {"go victim", goClient}} {
			survivor.Counters().ForEach(func(c aeron.CounterInfo) bool {
				if c.OwnerID == v.client || (c.TypeID == aeron.CounterTypeClientHeartbeat && c.RegistrationID == v.client) {
					fmt.Fprintf(&b, "  %s (client %d): counter %d type %d %q value %d still allocated\n",
						v.name, v.client, c.ID, c.TypeID, c.Label, c.Value)
				}
				return true
			})
		}
		if n := gone.Load(); n != 2 {
			fmt.Fprintf(&b, "  survivor: %d unavailable-image notices, want 2\n", n)
		}
		for _, s := range []*aeron.Subscription{fromJava, fromGo} {
			for _, img := range s.Images() {
				fmt.Fprintf(&b, "  survivor: stream %d still has image session %d (correlation %d) at position %d, end of stream %v; %s\n",
					s.StreamID(), img.SessionID(), img.CorrelationID(), img.Position(), img.IsEndOfStream(),
					frameAt(d.Dir(), img.CorrelationID(), img.TermBufferLength(), img.Position()))
			}
		}
		if b.Len() > 0 {
			// What the driver's publications say, to compare with the images.
			survivor.Counters().ForEach(func(c aeron.CounterInfo) bool {
				if c.TypeID == aeron.CounterTypePublisherPosition || c.TypeID == aeron.CounterTypePublisherLimit ||
					c.TypeID == aeron.CounterTypeSubscriberPos ||
					(c.TypeID == aeron.CounterTypeSystem && (strings.Contains(c.Label, "nblock") || strings.Contains(c.Label, "imeout"))) {
					fmt.Fprintf(&b, "  counter %d %q = %d (owner %d)\n", c.ID, c.Label, c.Value, c.OwnerID)
				}
				return true
			})
		}
		return b.Len() == 0, "still held:\n" + b.String()
	})
	t.Logf("cleaned up %v after the kill (client liveness timeout 5s, unblock timeout 7s)", time.Since(killed).Round(time.Millisecond))
	if n := survivor.Counters().Value(24); n != 2 {
		t.Errorf("client timeouts counter %d, want 2", n)
	}
	// The survivor's own stream, once held back by the dead subscribers,
	// flows: more than a whole term goes through.
	sent, got := 0, 0
	msg := make([]byte, 96)
	testkit.Eventually(t, ioTimeout, "the survivor's stream to carry 1024 messages", func() (bool, string) {
		// A burst per check: Eventually backs off between checks, and one
		// message per check would take minutes to reach 1024.
		for i := 0; i < 256 && got <= 1024; i++ {
			if own.Offer(msg) > 0 {
				sent++
			}
			got += ownSub.Poll(func([]byte, *aeron.Header) {}, 100)
		}
		return got > 1024, fmt.Sprintf("%d messages offered, %d received", sent, got)
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

// frameAt describes the frame an IPC image is stopped at, read from the
// publication's log in the driver's directory: a length of 0 is a claim
// whose header was never written, a negative one a claim never committed.
func frameAt(dir string, registrationID int64, termLength int, pos int64) string {
	path := fmt.Sprintf("%s/publications/%d.logbuffer", dir, registrationID)
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	shift := bits.TrailingZeros(uint(termLength))
	off := int64(termLength)*((pos>>shift)%3) + pos&int64(termLength-1)
	var b [4]byte
	if _, err := f.ReadAt(b[:], off); err != nil {
		return err.Error()
	}
	return fmt.Sprintf("the frame there has length %d", int32(binary.LittleEndian.Uint32(b[:])))
}
