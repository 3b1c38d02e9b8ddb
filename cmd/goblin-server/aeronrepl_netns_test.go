package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/netns"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// The impairment of the lossy replicas' ports: 5 % loss, 5 % duplicates,
// a quarter of the frames overtaking the rest, which wait 1 ms.
var aeronLossy = netns.Impairment{Loss: 0.05, Duplicate: 0.05, Reorder: 0.25, Delay: time.Millisecond}

// aeronLAN is a primary and replicas on a LAN of namespaces.
type aeronLAN struct {
	lan      *netns.LAN
	bin      string
	primary  *nsServer
	channel  func(host int) string // the replication channel, as host names it
	status   string                // the status channel
	replicas []*nsServer
}

// nsServer is a goblin-server inside a namespace, reached from the test
// through its Unix socket.
type nsServer struct {
	p    *testproc.Proc
	sock string
	tcp  string
	c    *redis.Client
	args []string
	host int
}

func newAeronLAN(t testing.TB, replicas int, impaired []bool) *aeronLAN {
	testkit.NeedRoot(t, "network namespaces, one per host")
	testkit.Need(t, "ip", "network namespaces")
	lan, err := netns.NewLAN(netns.LANOptions{Prefix: "aeronfan", Hosts: 1 + replicas, Impaired: append([]bool{false}, impaired...)})
	testkit.Require(t, "a LAN of network namespaces", err)
	t.Cleanup(func() {
		if err := lan.Close(); err != nil {
			t.Errorf("removing the namespaces: %v", err)
		}
	})
	return &aeronLAN{lan: lan, bin: testproc.Build(t, "./cmd/goblin-server")}
}

// start starts a goblin-server in host's namespace.
func (a *aeronLAN) start(t testing.TB, host int, args ...string) *nsServer {
	t.Helper()
	s := &nsServer{sock: filepath.Join(t.TempDir(), "g.sock"), host: host, args: args}
	a.run(t, s)
	return s
}

func (a *aeronLAN) run(t testing.TB, s *nsServer) {
	t.Helper()
	all := append([]string{"--listen", "uds://" + s.sock + ",tcp://" + a.lan.Addr[s.host].String() + ":0",
		"--log-level", "debug", "--dir", t.TempDir(), "--protected-mode", "no"}, s.args...)
	p, err := testproc.StartCmd(a.lan.Command(s.host, a.bin, all...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Stop(10 * time.Second)
		if t.Failed() {
			// The start (flags, drivers, channels) and the last 16,000
			// characters (a failover's window): a whole debug log of a
			// long test would drown the failure.
			log := p.Log()
			if len(log) > 20000 {
				log = log[:4000] + fmt.Sprintf("\n… (%d characters left out) …\n", len(log)-20000) + log[len(log)-16000:]
			}
			t.Logf("log of goblin-server on host %d (pid %d):\n%s", s.host, p.PID, log)
		}
	})
	s.p = p
	s.tcp = p.WaitLog(t, `msg=listening target="?tcp://([^?"]+)`, startTimeout)
	p.WaitLog(t, `msg=ready`, startTimeout)
	if s.c != nil {
		s.c.Close()
	}
	s.c = redis.NewClient(&redis.Options{Network: "unix", Addr: s.sock, PoolSize: 1})
	t.Cleanup(func() { s.c.Close() })
}

func (a *aeronLAN) startPrimary(t testing.TB, extra ...string) {
	args := append([]string{"--repl-aeron-channel", a.channel(0), "--repl-aeron-status-channel", a.status}, extra...)
	a.primary = a.start(t, 0, args...)
}

func (a *aeronLAN) startReplica(t testing.TB, host int, extra ...string) *nsServer {
	r := a.start(t, host, append([]string{"--replicaof", strings.Replace(a.primary.tcp, ":", " ", 1),
		"--replica-aeron-channel", a.channel(host), "--replica-aeron-status-channel", a.status,
		"--replica-aeron-name", fmt.Sprintf("host%d", host)}, extra...)...)
	a.replicas = append(a.replicas, r)
	return r
}

// seqModel writes n RPUSH seq <i> in order among the mixed writes: a
// replica that applied a write twice or out of order holds a list other
// than 0 … n-1.
func seqWrites(t *testing.T, c *redis.Client, rng *rand.Rand, from, n int) {
	t.Helper()
	ctx := context.Background()
	for i := from; i < from+n; {
		pl := c.Pipeline()
		for j := 0; j < 50 && i < from+n; j++ {
			pl.RPush(ctx, "seq", i)
			i++
		}
		if _, err := pl.Exec(ctx); err != nil {
			t.Fatalf("RPUSH seq: %v", err)
		}
		mixedWrites(t, c, rng, "k", 150)
	}
}

// checkSeq checks the replica's seq list is 0 … n-1 in order.
func checkSeq(t *testing.T, name string, c *redis.Client, n int) {
	t.Helper()
	got, err := c.LRange(context.Background(), "seq", 0, -1).Result()
	if err != nil {
		t.Fatalf("%s: LRANGE seq: %v", name, err)
	}
	if len(got) != n {
		t.Errorf("%s: seq holds %d entries, want %d (a write applied twice or lost)", name, len(got), n)
	}
	for i, v := range got {
		if v != strconv.Itoa(i) {
			t.Fatalf("%s: seq[%d] = %s, want %d: a write applied twice or out of order", name, i, v, i)
		}
	}
}

func aeronWrites() int {
	if n, err := strconv.Atoi(os.Getenv("AERON_REPL_WRITES")); err == nil && n > 0 {
		return n
	}
	// Coverage cut: 8,000, not 40,000 (2.4x fewer CPU-s). The 32,000 left
	// out all went in the last phase, after every fault: the kill, the
	// cut past the backlog and the watched prefix happen in the first
	// phases, whose sizes (per, at least 200 seq entries) are the same.
	// What went with them, unchecked: the last phase back-pressured the
	// publication (2,063-76,246 offers in four runs at 40,000; 0 in three
	// at 8,000, and in one of two runs at 16,000), which drained to every
	// replica all the same; set AERON_REPL_WRITES=40000 for that.
	return 8000
}

// TestAeronReplicationLAN: a goblin primary publishing its replication
// stream once on an Aeron channel, and four goblin replicas, each in its
// own network namespace on one bridged LAN, two of them behind the
// userspace impaired link (5 % loss, 5 % duplicates, reordering, 1 ms
// delay); over a multicast channel and over an MDC (control-mode=dynamic)
// one. While mixed writes run:
//   - every replica catches up over TCP and switches to the Aeron stream;
//   - replica 1 is SIGKILLed mid-stream and restarted: it comes back
//     through a snapshot and the merge onto the stream;
//   - replica 3 (impaired) is cut off (100 % loss) for longer than the
//     primary's backlog (16 KiB) holds: it falls back and resynchronises;
//
// then every replica holds the primary's data key by key, reaches its
// offset, follows the Aeron stream, and its seq list (RPUSH 0 … n-1 among
// the writes) is exactly 0 … n-1: no write applied twice or out of order.
// While the stream runs, replicas 2 and 3 are read every 20 ms and must
// always show a prefix of seq that never shrinks (prefixWatch). Replica 1
// must log a full resynchronisation and the hand-over to Aeron, replica 4
// one more full resynchronisation after its cut. The primary lists the
// four Aeron replicas at its offset. AERON_REPL_WRITES sets the number of
// writes (default 8 000 for CI; 1 000 000 is the long run, by hand).
func TestAeronReplicationLAN(t *testing.T) {
	t.Parallel() // its own namespaces, processes and directories; it times nothing
	for _, mode := range []string{"multicast", "mdc"} {
		t.Run(mode, func(t *testing.T) { aeronLANRun(t, mode) })
	}
}

func aeronLANRun(t *testing.T, mode string) {
	const nrep = 4
	impaired := []bool{false, false, true, true} // hosts 1..4: 3 and 4 lossy
	a := newAeronLAN(t, nrep, impaired)
	addr := func(h int) string { return a.lan.Addr[h].String() }
	group := fmt.Sprintf("239.255.%d.%d", 1+rand.IntN(250), 1+2*rand.IntN(120)) // Aeron: an odd data address (its control address is the next)
	switch mode {
	case "multicast":
		a.channel = func(h int) string {
			if h == 0 { // short terms: a replica cut off for long loses what the publication no longer holds
				return fmt.Sprintf("aeron:udp?endpoint=%s:40456|interface=%s|term-length=128k", group, addr(h))
			}
			return fmt.Sprintf("aeron:udp?endpoint=%s:40456|interface=%s", group, addr(h))
		}
	case "mdc":
		a.channel = func(h int) string {
			if h == 0 {
				return fmt.Sprintf("aeron:udp?control-mode=dynamic|control=%s:40457|term-length=128k", addr(0))
			}
			return fmt.Sprintf("aeron:udp?endpoint=%s:40456|control=%s:40457|control-mode=dynamic", addr(h), addr(0))
		}
	}
	a.status = fmt.Sprintf("aeron:udp?endpoint=%s:40458", addr(0))
	a.startPrimary(t, "--repl-backlog-size", "16384")
	pc := a.primary.c
	rng := rand.New(rand.NewPCG(3, 4))
	n := aeronWrites()
	per := max(n/200, 200) // seq entries: 1 in 4 writes
	seqWrites(t, pc, rng, 0, per)
	for h := 1; h <= nrep; h++ {
		if impaired[h-1] {
			if err := a.lan.Set(h, aeronLossy); err != nil {
				t.Fatal(err)
			}
		}
		a.startReplica(t, h)
	}
	for i, r := range a.replicas {
		t.Logf("waiting for replica %d", i+1)
		aeronLive(t, r.c)
	}
	// Replicas 2 (plain port) and 3 (impaired) are watched while the
	// stream runs: what they show must always be a prefix of the writes.
	watch := []*prefixWatch{watchPrefix(a.replicas[1].sock), watchPrefix(a.replicas[2].sock)}
	seq := per
	seqWrites(t, pc, rng, seq, per)
	seq += per

	// Replica 1 killed mid-stream, restarted.
	r1 := a.replicas[0]
	r1.p.Signal(syscall.SIGKILL)
	r1.p.Wait(10 * time.Second)
	// A killed server leaves its media driver's directory behind.
	if m := regexp.MustCompile(`aeron_dir=(\S+)`).FindStringSubmatch(r1.p.Log()); m != nil {
		os.RemoveAll(m[1])
	}
	seqWrites(t, pc, rng, seq, per)
	seq += per
	a.run(t, r1)

	// Replica 4 (impaired) cut off past the backlog.
	r4 := a.replicas[3]
	fullBefore := infoInt(t, pc, "stats", "sync_full")
	r4Full := strings.Count(r4.p.Log(), "replica: full resynchronisation")
	if err := a.lan.Set(4, netns.Impairment{Loss: 1}); err != nil {
		t.Fatal(err)
	}
	seqWrites(t, pc, rng, seq, 3*per) // far more than the 16 KiB backlog and the 3 × 128 KiB terms
	seq += 3 * per
	time.Sleep(3 * time.Second) // past the replica's 2 s of silence
	if err := a.lan.Set(4, aeronLossy); err != nil {
		t.Fatal(err)
	}
	rest := max(n/4-6*per, per)
	seqWrites(t, pc, rng, seq, rest)
	seq += rest

	want := infoInt(t, pc, "replication", "master_repl_offset")
	for i, w := range watch {
		samples, bad := w.stop()
		t.Logf("replica %d watched while the stream ran: %d samples, longest seq seen %d", i+2, samples, w.longest)
		for _, b := range bad {
			t.Errorf("replica %d: %s", i+2, b)
		}
		if samples < 20 {
			t.Errorf("replica %d was sampled %d times while the stream ran, want at least 20: the watch checked nothing", i+2, samples)
		}
	}
	for i, r := range a.replicas {
		name := fmt.Sprintf("replica %d", i+1)
		testkit.Eventually(t, 180*time.Second, fmt.Sprintf("%s to reach the primary's offset %d on the Aeron stream", name, want), func() (bool, string) {
			got := infoInt(t, r.c, "replication", "slave_repl_offset")
			link := infoField(t, r.c, "replication", "aeron_link")
			return got >= want && link == "aeron", fmt.Sprintf("at %d, aeron_link:%s", got, link)
		})
		sameData(t, pc, r.c)
		checkSeq(t, name, r.c, seq)
		info, _ := r.c.Info(context.Background(), "replication").Result()
		t.Logf("%s: %s", name, strings.Join(grepLines(info, "aeron_")[1:], " ")) // the channel left out
	}
	for h := 1; h <= nrep; h++ {
		if c := a.lan.Counts(h); c != nil {
			t.Logf("host %d's port: %d frames carried, %d dropped, %d duplicated, %d delayed", h,
				c.Carried.Load(), c.Dropped.Load(), c.Duplicated.Load(), c.Delayed.Load())
			if c.Dropped.Load() == 0 || c.Duplicated.Load() == 0 || c.Delayed.Load() == 0 {
				t.Errorf("host %d's port was not impaired", h)
			}
		}
	}
	if f := infoInt(t, r4.c, "replication", "aeron_fallbacks"); f < 1 {
		t.Errorf("replica 4 cut off: aeron_fallbacks:%d, want at least 1", f)
	}
	if full := infoInt(t, pc, "stats", "sync_full"); full <= fullBefore {
		t.Errorf("replica 4 cut off past the backlog: sync_full stayed %d, want a full resync", full)
	}
	if n := strings.Count(r4.p.Log(), "replica: full resynchronisation"); n <= r4Full {
		t.Errorf("replica 4 cut off past the backlog logged %d full resynchronisations, as many as before the cut: want one more", n)
	}
	// The restarted replica 1 came back through a snapshot, then the
	// merge onto the Aeron stream.
	if l := r1.p.Log(); !strings.Contains(l, "replica: full resynchronisation") || !strings.Contains(l, "caught up; following the Aeron stream") {
		t.Errorf("replica 1 restarted: its log shows no full resynchronisation followed by the hand-over to the Aeron stream")
	}
	testkit.Eventually(t, 15*time.Second, "the primary to list the four Aeron replicas at its offset", func() (bool, string) {
		// The offset moves on with the pings a replica on a TCP link gets.
		info, _ := pc.Info(context.Background(), "replication").Result()
		cur := infoInt(t, pc, "replication", "master_repl_offset")
		return infoInt(t, pc, "replication", "aeron_connected_replicas") == nrep &&
			strings.Count(info, fmt.Sprintf("offset=%d,lag_bytes=0", cur)) == nrep, info
	})
	info, _ := pc.Info(context.Background(), "replication").Result()
	t.Logf("primary: %d writes, offset %d, %s", n, want, strings.Join(grepLines(info, "aeron_"), " "))
}

// prefixWatch reads a replica's seq list every 20 ms while the writes
// run, in one MULTI (LLEN seq, LINDEX seq -1): a replica that applied a
// write twice or out of order shows a last entry other than its length
// minus one, or a list that got shorter. LOADING answers (a full
// resynchronisation) are skipped.
type prefixWatch struct {
	c       *redis.Client
	done    chan struct{}
	stopped chan struct{}
	samples int
	longest int64
	bad     []string
}

func watchPrefix(sock string) *prefixWatch {
	w := &prefixWatch{c: redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: 1, MaxRetries: -1}),
		done: make(chan struct{}), stopped: make(chan struct{})}
	go func() {
		defer close(w.stopped)
		ctx := context.Background()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-w.done:
				return
			case <-tick.C:
			}
			tx := w.c.TxPipeline()
			n := tx.LLen(ctx, "seq")
			last := tx.LIndex(ctx, "seq", -1)
			if _, err := tx.Exec(ctx); err != nil && err != redis.Nil {
				continue // LOADING, or a connection cut by a restart
			}
			l := n.Val()
			if l == 0 {
				continue
			}
			w.samples++
			if v, _ := strconv.ParseInt(last.Val(), 10, 64); v != l-1 && len(w.bad) < 10 {
				w.bad = append(w.bad, fmt.Sprintf("seq holds %d entries ending in %q, want %d: a write applied twice, lost or out of order", l, last.Val(), l-1))
			}
			if l < w.longest && len(w.bad) < 10 {
				w.bad = append(w.bad, fmt.Sprintf("seq shrank from %d to %d entries: the replica went back in the stream", w.longest, l))
			}
			w.longest = max(w.longest, l)
		}
	}()
	return w
}

// stop ends the watch and returns its samples and what it found wrong.
func (w *prefixWatch) stop() (int, []string) {
	close(w.done)
	<-w.stopped
	w.c.Close()
	return w.samples, w.bad
}

func grepLines(s, prefix string) []string {
	var out []string
	for _, l := range strings.Split(s, "\r\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}
