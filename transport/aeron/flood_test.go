package aeron_test

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	ae "github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/client"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
	"github.com/goblin-kv/goblin/transport/aeron"
)

// The flood test's knobs, from the environment: how long the flood lasts
// (default floodDefaultDuration), how many datagrams a second (default
// 30,000), and a goblin-server binary to test instead of one built from
// this tree (to measure an older server: the test then reports its crash).
const (
	envFloodDuration = "GOBLIN_FLOOD_DURATION"
	envFloodRate     = "GOBLIN_FLOOD_RATE"
	envFloodServer   = "GOBLIN_FLOOD_SERVER"
)

// floodDefaultDuration is how long the flood lasts unless
// GOBLIN_FLOOD_DURATION says otherwise: 25 s, about twice the 12–14 s after
// which the servers without the checks crashed (docs/aeron.md), with the
// second client halfway. It was 60 s, the longest single test of the race
// run; GOBLIN_FLOOD_DURATION=3m is the long run docs/aeron.md reports.
const floodDefaultDuration = 25 * time.Second

// floodImagesCeiling is the bound on the memory of all images the test
// gives the server's in-process driver (aeron.image.buffers.max.length,
// by its environment variable; the default is 1 GiB).
const (
	floodImagesCeiling    = 256 << 20
	floodImagesCeilingEnv = "AERON_IMAGE_BUFFERS_MAX_LENGTH=256m"
)

// floodDirCeiling bounds the server's Aeron directory during the flood:
// what it held before (the CnC file, the loss report, the client's reply
// publication and request image), the images' bound, and the reply logs
// of the listener's clients not yet connected or lingering (MaxPending)
// and the second client's.
func floodDirCeiling(baseline int64) int64 {
	replyLog := int64(3*aeron.DefaultTermLength + 4096)
	return baseline + floodImagesCeiling + int64(aeron.DefaultMaxPending+1)*replyLog
}

// TestFloodMalformedDatagrams is an attacker on the network against a
// goblin-server with one aeron:udp listener: aeron-flood sends malformed
// Aeron-shaped datagrams (SETUP with odd term lengths, MTUs and ids, DATA
// and PAD whose lengths, offsets, term ids and flags disagree with the
// datagram and the term, SM, NAK, ERR, RTTM garbage at the control side,
// mixed with well-formed SETUPs) at the request endpoint and the response
// control address, while a real client on the same channel keeps doing
// SET, GET and PING. The server must not crash, every reply must be
// right, the Aeron directory must stay under its ceiling and the driver's
// invalid-packet counter must move. It logs the legitimate client's PING
// latency and the directory's largest size.
func TestFloodMalformedDatagrams(t *testing.T) {
	t.Parallel() // its whole duration is waiting on its own server and flooder
	duration := floodDefaultDuration
	if v := os.Getenv(envFloodDuration); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("%s=%q: %v", envFloodDuration, v, err)
		}
		duration = d
	}
	rate := 30000
	if v := os.Getenv(envFloodRate); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("%s=%q: want a positive number of datagrams a second", envFloodRate, v)
		}
		rate = n
	}
	bin := os.Getenv(envFloodServer)
	if bin == "" {
		bin = testproc.Build(t, "./cmd/goblin-server")
	}
	floodBin := testproc.Build(t, "./aeron/cmd/aeron-flood")
	ports := testproc.FreeUDPPorts(t, 2)
	endpoint, control := loopback(ports[0]), loopback(ports[1])
	tgt := fmt.Sprintf("aeron:udp?endpoint=%s|control=%s|proto=resp", endpoint, control)
	dir := shmDir(t)
	// backoff, not yield (CI time): under the flood the loop always has
	// work and never parks; after it, the test waits ~15 s for the second
	// client, whose connection waits for the flood's pending sessions to
	// time out, and a yielding loop took a core meanwhile (46 -> 36 CPU-s,
	// as many rounds of the client).
	srv := startWithEnv(t, bin, []string{floodImagesCeilingEnv},
		"--metrics", "off", "--idle", "backoff", "--log-level", "info", "--listen", tgt+"|dir="+dir)
	srv.WaitLog(t, `msg=ready`, 120*time.Second)

	ctx := context.Background()
	c, err := client.Options{DialTimeout: time.Minute}.Dial(ctx, tgt)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cnc, err := ae.OpenCnC(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer cnc.Close()
	invalid := invalidPacketsCounter(t, cnc)
	before := cnc.Counters().Value(invalid)
	baseline, _ := dirSize(dir)
	ceiling := floodDirCeiling(baseline)

	flooder := testproc.Start(t, floodBin, "-endpoint", endpoint, "-control", control, "-rate", strconv.Itoa(rate),
		"-duration", duration.String())
	start := time.Now()
	var (
		pings            []time.Duration
		maxDir, maxAlloc atomic.Int64
		peak             atomic.Value // what the largest directory over the ceiling held
		secondClientDone bool
		val, got         []byte
		rounds           int
	)
	// The directory is measured every 250 ms, however the client fares.
	sampled := make(chan struct{})
	stopSampling := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case <-tick.C:
			}
			size, alloc, listing := dirWalk(dir)
			if size > maxDir.Load() {
				if size > ceiling {
					peak.Store(listing) // before maxDir, which the test reads first
				}
				maxDir.Store(size)
			}
			if alloc > maxAlloc.Load() {
				maxAlloc.Store(alloc)
			}
		}
	}()
	stop := func() {
		select {
		case <-stopSampling:
		default:
			close(stopSampling)
			<-sampled
		}
	}
	defer stop()
	// What the legitimate client saw, logged however the test ends (a
	// server that died too).
	defer func() {
		if len(pings) == 0 {
			t.Logf("legitimate client: no round completed in %v", time.Since(start))
			return
		}
		stop()
		slices.Sort(pings)
		t.Logf("legitimate client: %d rounds of SET, GET, PING in %v; PING p50 %v p99 %v max %v", rounds,
			time.Since(start).Round(time.Millisecond), pings[len(pings)/2], pings[len(pings)*99/100], pings[len(pings)-1])
		t.Logf("Aeron directory: %d bytes before the flood, largest %d bytes (%d allocated) during it, ceiling %d",
			baseline, maxDir.Load(), maxAlloc.Load(), ceiling)
	}()
	for i := 0; !flooder.Exited(); i++ {
		if srv.Exited() {
			t.Fatalf("goblin-server exited %v into the flood (round %d of the client)", time.Since(start).Round(time.Millisecond), i)
		}
		opCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		key := "flood:" + strconv.Itoa(i%128)
		val = strconv.AppendInt(append(val[:0], "v-"...), int64(i), 10)
		if err := c.Set(opCtx, key, val, client.SetOptions{}); err != nil {
			cancel()
			t.Fatalf("round %d, %v into the flood: SET: %v (server exited: %v)", i, time.Since(start), err, srv.Exited())
		}
		if got, err = c.GetAppend(opCtx, got[:0], key); err != nil || string(got) != string(val) {
			cancel()
			t.Fatalf("round %d, %v into the flood: GET %s = %q, %v; want %q", i, time.Since(start), key, got, err, val)
		}
		t0 := time.Now()
		err := c.Ping(opCtx)
		pings = append(pings, time.Since(t0))
		cancel()
		if err != nil {
			t.Fatalf("round %d, %v into the flood: PING: %v", i, time.Since(start), err)
		}
		rounds++
		if size := maxDir.Load(); size > ceiling {
			t.Fatalf("%v into the flood the Aeron directory held %d bytes, over the ceiling of %d (%d bytes before the flood, the images' ceiling, 17 reply logs):\n%s",
				time.Since(start), size, ceiling, baseline, peak.Load())
		}
		// Halfway, a second client connects through the flood.
		if !secondClientDone && time.Since(start) > duration/2 {
			secondClientDone = true
			secondClient(t, tgt)
		}
	}
	if code, err := flooder.Wait(time.Second); err != nil || code != 0 {
		t.Fatalf("aeron-flood: exit %d, %v\n%s", code, err, flooder.Log())
	}
	if srv.Exited() {
		t.Fatal("goblin-server exited during the flood")
	}
	stop()
	if size := maxDir.Load(); size > ceiling {
		t.Fatalf("the Aeron directory held %d bytes during the flood, over the ceiling of %d:\n%s", size, ceiling, peak.Load())
	}
	moved := cnc.Counters().Value(invalid) - before
	t.Logf("flood of %v at %d/s: %s", duration, rate, strings.TrimSpace(flooder.Log()))
	t.Logf("invalid packets counted: %d", moved)
	if moved <= 0 {
		t.Errorf("the driver's invalid-packets counter did not move (%d before the flood)", before)
	}
	if !secondClientDone {
		t.Error("the flood ended before a second client connected through it")
	}
	if code := srv.Stop(30 * time.Second); code != 0 {
		t.Errorf("goblin-server exited %d on SIGTERM after the flood", code)
	}
	if strings.Contains(srv.Log(), "panic") {
		t.Errorf("goblin-server logged a panic:\n%s", srv.Log())
	}
}

// startWithEnv starts bin with args and env added to the environment,
// stopped in cleanup (its log printed if the test failed).
func startWithEnv(t *testing.T, bin string, env []string, args ...string) *testproc.Proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	p, err := testproc.StartCmd(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Stop(10 * time.Second)
		if t.Failed() {
			t.Logf("log of %s (pid %d):\n%s", filepath.Base(bin), p.PID, p.Log())
		}
	})
	return p
}

// secondClient dials tgt afresh and runs a few checked rounds.
func secondClient(t *testing.T, tgt string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := client.Options{DialTimeout: time.Minute}.Dial(ctx, tgt)
	if err != nil {
		t.Fatalf("a second client could not connect during the flood: %v", err)
	}
	defer c.Close()
	if err := workload(ctx, c, 2, 20, nil); err != nil {
		t.Fatalf("second client during the flood: %v", err)
	}
}

// invalidPacketsCounter finds the driver's "Invalid packets" system
// counter.
func invalidPacketsCounter(t *testing.T, cnc *ae.CnC) int32 {
	t.Helper()
	id := int32(-1)
	cnc.Counters().ForEach(func(i ae.CounterInfo) bool {
		if i.TypeID == 0 && i.Label == "Invalid packets" {
			id = i.ID
			return false
		}
		return true
	})
	if id < 0 {
		t.Fatal(`the driver's CnC has no "Invalid packets" system counter`)
	}
	return id
}

// dirSize returns the apparent and the allocated size of the files under
// dir.
func dirSize(dir string) (size, alloc int64) {
	size, alloc, _ = dirWalk(dir)
	return size, alloc
}

// dirWalk returns the apparent and the allocated size of the files under
// dir, and the apparent size and number of files of each top-level entry,
// from one walk.
func dirWalk(dir string) (size, alloc int64, listing string) {
	type entry struct{ files, bytes int64 }
	parts := map[string]*entry{}
	filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil // a log removed while we walk
		}
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			size += info.Size()
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				alloc += st.Blocks * 512
			}
			top, _, _ := strings.Cut(strings.TrimPrefix(path, dir+"/"), "/")
			if parts[top] == nil {
				parts[top] = &entry{}
			}
			parts[top].files++
			parts[top].bytes += info.Size()
		}
		return nil
	})
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(parts)) {
		fmt.Fprintf(&b, "%14d bytes in %4d files: %s\n", parts[k].bytes, parts[k].files, k)
	}
	return size, alloc, b.String()
}

// TestSetupFloodBoundsReplyLogs: every SETUP asking for a response
// channel, from anyone, makes the listener a client with a reply
// publication (a log of three terms) waiting for it to connect. A flood of
// them with new session ids must not make more than MaxPending reply logs
// at once, lingering ones included, and a real client connects afterwards
// (once the flood's sessions have timed out, if they still hold every
// place).
func TestSetupFloodBoundsReplyLogs(t *testing.T) {
	t.Parallel() // mostly waits out the image liveness timeout
	bin := testproc.Build(t, "./cmd/goblin-server")
	floodBin := testproc.Build(t, "./aeron/cmd/aeron-flood")
	ports := testproc.FreeUDPPorts(t, 2)
	endpoint, control := loopback(ports[0]), loopback(ports[1])
	tgt := fmt.Sprintf("aeron:udp?endpoint=%s|control=%s|proto=resp", endpoint, control)
	dir := shmDir(t)
	// backoff, not yield: the server mostly waits here (20 SETUPs a
	// second, then a liveness timeout), and a yielding loop took a core
	// for the test's 30 s (CI time; 10.2 -> 5.4 CPU-s under load 20).
	srv := testproc.Start(t, bin, "--metrics", "off", "--idle", "backoff", "--log-level", "info", "--listen", tgt+"|dir="+dir)
	srv.WaitLog(t, `msg=ready`, 120*time.Second)
	// Longer than the image liveness timeout (10 s): the first sessions'
	// images go while new SETUPs come, and the logs of their reply
	// publications linger in the driver.
	const setups = 20 * 14
	flooder := testproc.Start(t, floodBin, "-endpoint", endpoint, "-kinds", "setup-response", "-rate", "20",
		"-duration", "14s")
	most := 0
	for start := time.Now(); !flooder.Exited() || most == 0; {
		if time.Since(start) > 2*time.Minute {
			t.Fatalf("the 14 s SETUP flood still running after 2 min (at most %d reply publications so far)", most)
		}
		entries, _ := os.ReadDir(filepath.Join(dir, "publications"))
		most = max(most, len(entries))
		if srv.Exited() {
			t.Fatal("goblin-server exited during the SETUP flood")
		}
		if most > aeron.DefaultMaxPending {
			t.Fatalf("%d reply publications for SETUPs nobody followed up, more than MaxPending (%d)",
				most, aeron.DefaultMaxPending)
		}
		time.Sleep(10 * time.Millisecond)
		if flooder.Exited() && most == 0 {
			t.Fatalf("%d SETUPs asking for a response channel made no reply publication", setups)
		}
	}
	t.Logf("%d SETUPs asking for a response channel: at most %d reply publications at once", setups, most)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := client.Options{DialTimeout: time.Minute}.Dial(ctx, tgt)
	if err != nil {
		t.Fatalf("a client could not connect after the SETUP flood: %v", err)
	}
	defer c.Close()
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("PING after the SETUP flood: %v", err)
	}
}
