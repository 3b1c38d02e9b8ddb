package reliability

// Hostile clients of the socket listeners (Unix and TCP): trickled
// requests, slow consumers, memory hoarders, socket squatting and password
// guessing, each with the figure it measures.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/client"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// goblin is one goblin-server process with a RESP Unix socket and a TCP
// port.
type goblin struct {
	p    *testproc.Proc
	dir  string
	sock string // Unix socket path (RESP)
	tcp  string // host:port (RESP)
}

// startGoblin starts goblin-server on a private socket and port with extra
// flags and waits until it is ready.
func startGoblin(t *testing.T, extra ...string) *goblin {
	t.Helper()
	bin := testproc.Build(t, "./cmd/goblin-server")
	g := &goblin{dir: t.TempDir()}
	g.sock = filepath.Join(g.dir, "goblin.sock")
	args := append([]string{"--metrics", "off", "--listen", "uds://" + g.sock + ",tcp://127.0.0.1:0"}, extra...)
	g.p = testproc.Start(t, bin, args...)
	g.tcp = g.p.WaitLog(t, `msg=listening target="?tcp://([^?"]+)`, 60*time.Second)
	g.p.WaitLog(t, `msg=ready`, 60*time.Second)
	return g
}

// dialRESP connects to the server's Unix socket.
func (g *goblin) dial(t testing.TB) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("unix", g.sock, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// cpuTicks returns the process's user+system CPU time in clock ticks
// (1/100 s on Linux).
func cpuTicks(t testing.TB, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// The fields after the command name (which is in parentheses and may
	// hold spaces): state is field 3, utime 14, stime 15.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}

// latencies are round-trip times, sorted.
type latencies []time.Duration

func (l latencies) pct(p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	return l[min(len(l)-1, int(float64(len(l))*p))]
}

func (l latencies) String() string {
	return fmt.Sprintf("p50 %v p99 %v max %v (%d round trips)", l.pct(0.5), l.pct(0.99), l.pct(1), len(l))
}

// pings sends PINGs on c one at a time for d and returns their round trips.
func pings(t testing.TB, c net.Conn, d time.Duration) latencies {
	t.Helper()
	r := bufio.NewReader(c)
	var out latencies
	for end := time.Now().Add(d); time.Now().Before(end); {
		start := time.Now()
		c.SetDeadline(start.Add(30 * time.Second))
		if _, err := c.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
			t.Fatalf("PING: %v", err)
		}
		line, err := r.ReadString('\n')
		if err != nil || line != "+PONG\r\n" {
			t.Fatalf("PING: %q %v", line, err)
		}
		out = append(out, time.Since(start))
		time.Sleep(time.Millisecond) // a client doing something else between requests
	}
	slices.Sort(out)
	return out
}

// bigRequest is the attack's request: a multibulk of count one-byte
// arguments.
func bigRequest(count int) []byte {
	b := []byte("*" + strconv.Itoa(count) + "\r\n")
	for i := 0; i < count; i++ {
		b = append(b, "$1\r\nx\r\n"...)
	}
	return b
}

// TestTrickledRequestDoesNotStallOthers reproduces a trickling attack: four
// clients each pre-send all but the last 1,000 bytes of a 1,048,575-argument
// request (7 MB) and then trickle the rest 7 bytes every 20 ms. Before the
// parser resumed, every trickle re-parsed the whole request: the loop ran
// at 100 % and another client's PING p50 went from 0.15 ms to 22 ms. The
// test measures another client's PING round trips before and during the
// attack and the server's CPU during it.
func TestTrickledRequestDoesNotStallOthers(t *testing.T) {
	g := startGoblin(t)
	pinger := g.dial(t)
	pings(t, pinger, 200*time.Millisecond) // warm up
	base := pings(t, pinger, time.Second)
	t.Logf("PING before the attack: %v", base)

	const attackers = 4
	req := bigRequest(1048575)
	head, tail := req[:len(req)-1000], req[len(req)-1000:]
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var sent sync.WaitGroup
	for i := 0; i < attackers; i++ {
		c := g.dial(t)
		wg.Add(1)
		sent.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Write(head); err != nil {
				t.Errorf("attacker: pre-send: %v", err)
				sent.Done()
				return
			}
			sent.Done()
			for rest := tail; len(rest) > 7; rest = rest[7:] {
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
				if _, err := c.Write(rest[:7]); err != nil {
					t.Errorf("attacker: trickle: %v", err)
					return
				}
			}
		}()
	}
	sent.Wait()
	ticks := cpuTicks(t, g.p.PID)
	start := time.Now()
	during := pings(t, pinger, 2*time.Second)
	cpu := float64(cpuTicks(t, g.p.PID)-ticks) / 100 / time.Since(start).Seconds()
	close(stop)
	wg.Wait()
	t.Logf("PING during the attack (%d clients trickling a 7 MB request): %v; server CPU %.0f%% of a core", attackers, during, 100*cpu)
	if limit := max(2*time.Millisecond, 4*base.pct(0.5)); during.pct(0.5) > limit {
		t.Errorf("PING p50 %v during the attack, want at most %v (4x the p50 before it, or 2 ms)", during.pct(0.5), limit)
	}
	if cpu > 0.5 {
		t.Errorf("the server used %.0f%% of a core serving PINGs and trickles, want under 50%%", 100*cpu)
	}
	// The attackers' requests were parsed as they came and are answered
	// once complete.
	c := g.dial(t)
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(60 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "-ERR unknown command 'x'") {
		t.Fatalf("reply to the completed 1M-argument request: %q %v", line, err)
	}
}

// rss returns the server's resident set size.
func (g *goblin) rss(t testing.TB) int64 {
	t.Helper()
	n, err := g.p.RSS()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// mib formats bytes as MiB.
func mib(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }

// setValue stores a value of size bytes under key.
func (g *goblin) setValue(t testing.TB, key string, size int) {
	t.Helper()
	c := g.dial(t)
	fmt.Fprintf(c, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n", len(key), key, size)
	c.Write(bytes.Repeat([]byte("v"), size))
	c.Write([]byte("\r\n"))
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "+OK\r\n" {
		t.Fatalf("SET %s: %q %v", key, line, err)
	}
	c.Close()
}

// watchRSS samples the server's RSS every 10 ms until stop is closed and
// returns the largest sample.
func (g *goblin) watchRSS(stop <-chan struct{}) <-chan int64 {
	peak := make(chan int64, 1)
	go func() {
		var max int64
		for {
			if n, err := g.p.RSS(); err == nil && n > max {
				max = n
			}
			select {
			case <-stop:
				peak <- max
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return peak
}

// TestSlowConsumersMemoryIsReturned reproduces slow consumers that once
// left their reply memory behind: 20 clients ask for 1 MiB values and never read, until each
// holds --client-output-limit (16 MiB) of replies and is disconnected at
// the stall timeout. The memory their replies took must go back to the
// operating system once they are gone (it stayed: 20 slow consumers left
// 1.3–1.4 GB of RSS behind).
func TestSlowConsumersMemoryIsReturned(t *testing.T) {
	g := startGoblin(t, "--client-output-limit", "16mb", "--client-stall-timeout", "1s")
	g.setValue(t, "big", 1<<20)
	before := g.rss(t)
	const clients = 20
	var req []byte
	for i := 0; i < 64; i++ {
		req = append(req, "*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n"...)
	}
	stop := make(chan struct{})
	peakC := g.watchRSS(stop)
	for i := 0; i < clients; i++ {
		c := g.dial(t)
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
	}
	// Each is disconnected after a second of not reading.
	testkit.Eventually(t, 60*time.Second, "the server to drop the 20 slow consumers", func() (bool, string) {
		return strings.Count(g.p.Log(), "it does not read its replies") == clients, ""
	})
	pinger := g.dial(t)
	pings(t, pinger, 10*time.Millisecond) // the server still answers
	// The memory goes back within a few seconds (a release is asked for
	// at most once a second, and runs beside the loop).
	var after int64
	_ = testkit.Poll(10*time.Second, "the RSS to go back", func() (bool, string) { after = g.rss(t); return after < before+32<<20, "" })
	close(stop)
	peak := <-peakC
	t.Logf("RSS before %s, peak with %d slow consumers %s, after they were dropped %s", mib(before), clients, mib(peak), mib(after))
	if peak < before+100<<20 {
		t.Fatalf("the slow consumers never held their replies (peak RSS %s): the test measures nothing", mib(peak))
	}
	if after >= before+32<<20 {
		t.Errorf("RSS %s after the slow consumers were dropped, want within 32 MiB of the %s before", mib(after), mib(before))
	}
}

// TestClientMemoryBudgetHolds reproduces memory hoarders, which no total
// cap once stopped: 20
// clients each send 60 MB of one request and never finish it (1.67 GB RSS
// before the budget). With --maxmemory-clients 256mb the server evicts
// the biggest as the total passes it; the test logs the peak RSS and
// requires it within the budget plus the runtime's slack, and the server
// to go on serving.
func TestClientMemoryBudgetHolds(t *testing.T) {
	g := startGoblin(t, "--maxmemory-clients", "256mb")
	before := g.rss(t)
	stop := make(chan struct{})
	peakC := g.watchRSS(stop)
	const clients = 20
	// A multibulk of 1 MiB arguments, each within the default bulk
	// limit, of which 60 are sent.
	header := []byte("*100\r\n$4\r\nMSET\r\n")
	chunk := append([]byte("$1048576\r\n"), bytes.Repeat([]byte("h"), 1<<20)...)
	chunk = append(chunk, "\r\n"...)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var told int
	for i := 0; i < clients; i++ {
		c := g.dial(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Write(header); err != nil {
				return
			}
			for sent := 0; sent < 60; sent++ {
				if _, err := c.Write(chunk); err != nil {
					break // evicted
				}
			}
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			if line, _ := bufio.NewReader(c).ReadString('\n'); strings.Contains(line, "client memory limit") {
				mu.Lock()
				told++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	pinger := g.dial(t)
	during := pings(t, pinger, 200*time.Millisecond)
	close(stop)
	peak := <-peakC
	t.Logf("RSS before %s, peak %s with %d clients each sending 60 MB unfinished; %d told they were evicted; PING then %v", mib(before), mib(peak), clients, told, during)
	if told == 0 {
		t.Fatalf("no client was evicted: the budget did nothing")
	}
	if limit := before + 3*256<<20; peak > limit {
		t.Errorf("peak RSS %s, want at most %s (256 MiB of client buffers, the garbage their growth leaves and the heap's slack)", mib(peak), mib(limit))
	}
}

// TestLargeRepliesDoNotStallOthers: one slow reader once stalled the loop
// for everyone. A client
// pipelines GETs of a 4 MiB value and reads them slowly. The loop used to
// execute every GET in a 256-byte slice of its requests at once (nine of
// them: 36 MB of replies in buffers grown by doubling) whenever its queued
// replies fell under --client-output-limit; the issue measured 0.2–1.0 s
// stalls for everyone. Now one client's requests produce at most
// --client-output-per-pass (and one reply) per pass, which
// transport/uds's TestPassOutputSharesTheLoop checks exactly; this test
// logs what another client's PINGs see, and fails only on stalls far
// beyond scheduling noise (on the loaded 2-core development machine: p99
// 3–8 ms, max 20–320 ms; before, p99 0.5–38 ms, max 13 ms–1.26 s).
func TestLargeRepliesDoNotStallOthers(t *testing.T) {
	g := startGoblin(t, "--client-stall-timeout", "60s")
	g.setValue(t, "k", 4<<20)
	pinger := g.dial(t)
	pings(t, pinger, 200*time.Millisecond)
	base := pings(t, pinger, time.Second)
	greedy := g.dial(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // asks without end
		defer wg.Done()
		req := bytes.Repeat([]byte("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"), 64)
		for {
			select {
			case <-stop:
				return
			default:
			}
			greedy.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
			greedy.Write(req)
		}
	}()
	go func() { // reads 1 MiB every 10 ms
		defer wg.Done()
		buf := make([]byte, 1<<20)
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			greedy.SetReadDeadline(time.Now().Add(time.Second))
			io.ReadFull(greedy, buf)
		}
	}()
	time.Sleep(500 * time.Millisecond)
	during := pings(t, pinger, 3*time.Second)
	close(stop)
	greedy.Close()
	wg.Wait()
	t.Logf("PING before: %v; while a client pipelines 4 MiB GETs and reads slowly: %v", base, during)
	// The floor is scheduling noise's: beside two busy loops under -race,
	// 6 runs with no defect saw p99s of 7-46 ms while the greedy client ran
	// (and 5-1,560 ms before it, 55-737 PINGs), 46 ms against a 38 ms
	// "5x before"; the floor was 50 ms.
	if limit := max(100*time.Millisecond, 5*base.pct(0.99)); during.pct(0.99) > limit {
		t.Errorf("PING p99 %v while the greedy client runs, want at most %v (5x the p99 before, or 100 ms)", during.pct(0.99), limit)
	}
}

// TestThousandClients: 1,000 clients connected at once, each making 20
// round trips (SET, GET, PING) concurrently, all answered correctly; the
// round-trip p99 across them is logged.
func TestThousandClients(t *testing.T) {
	g := startGoblin(t)
	const clients, rounds = 1000, 20
	conns := make([]net.Conn, clients)
	for i := range conns {
		conns[i] = g.dial(t)
	}
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	lat := make([]latencies, clients)
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := bufio.NewReader(c)
			c.SetDeadline(time.Now().Add(120 * time.Second))
			for j := 0; j < rounds; j++ {
				key, val := fmt.Sprintf("k%d", i), fmt.Sprintf("v%d-%d", i, j)
				start := time.Now()
				fmt.Fprintf(c, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\nPING\r\n", len(key), key, len(val), val, len(key), key)
				want := []string{"+OK\r\n", fmt.Sprintf("$%d\r\n", len(val)), val + "\r\n", "+PONG\r\n"}
				for _, w := range want {
					if line, err := r.ReadString('\n'); err != nil || line != w {
						errs <- fmt.Errorf("client %d round %d: %q %v, want %q", i, j, line, err, w)
						return
					}
				}
				lat[i] = append(lat[i], time.Since(start))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var all latencies
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	t.Logf("%d clients x %d round trips of SET+GET+PING: %v", clients, rounds, all)
	if len(all) != clients*rounds {
		t.Fatalf("%d round trips completed, want %d", len(all), clients*rounds)
	}
}

// otherUser is the second Unix user of the socket tests; scripts/setup.sh
// creates it, and so does needOtherUsers when it is missing.
const otherUser = "goblin-test"

// needOtherUsers returns the uid and gid of otherUser and of nobody, the
// two local users the socket tests run processes as. They need root (to
// create otherUser and to switch users): without it the test fails in CI
// and is skipped elsewhere.
func needOtherUsers(t *testing.T) (victim, attacker [2]int) {
	t.Helper()
	testkit.NeedRoot(t, "running processes as other Unix users (scripts/setup.sh creates "+otherUser+")")
	ids := func(name string) ([2]int, error) {
		u, err := user.Lookup(name)
		if err != nil {
			return [2]int{}, err
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return [2]int{uid, gid}, nil
	}
	var err error
	if victim, err = ids(otherUser); err != nil {
		out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", otherUser).CombinedOutput()
		if err != nil {
			t.Fatalf("useradd %s: %v\n%s", otherUser, err, out)
		}
		if victim, err = ids(otherUser); err != nil {
			t.Fatal(err)
		}
	}
	if attacker, err = ids("nobody"); err != nil {
		t.Fatal(err)
	}
	return victim, attacker
}

// shareDir makes a directory under /tmp that every user may use: sticky
// and world-writable like /tmp itself (mode 1777), or readable (0755).
func shareDir(t *testing.T, mode os.FileMode) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "goblin-squat-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	return dir
}

// shareBin copies a built binary where other users may run it.
func shareBin(t *testing.T, dir, bin string) string {
	t.Helper()
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, filepath.Base(bin))
	if err := os.WriteFile(out, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return out
}

// as returns a command that runs bin as the user ids (uid, gid), with
// TMPDIR=tmp and no XDG_RUNTIME_DIR, plus env.
func as(ids [2]int, tmp, bin string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command("setpriv", append([]string{"--reuid", strconv.Itoa(ids[0]), "--regid", strconv.Itoa(ids[1]), "--clear-groups", "--", bin}, args...)...)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=/", "TMPDIR=" + tmp}, env...)
	return cmd
}

// TestSocketSquatting reproduces socket path squatting. With XDG_RUNTIME_DIR
// unset, goblin's default socket was /tmp/goblin.sock: another user who
// listened there first made goblin-server exit ("address in use") and
// received the AUTH password goblin-client sent. Now the default socket is
// in goblin-UID, a directory of the user's own; the test plays the other
// user (nobody) who creates that directory first and listens in it, and
// checks that the server refuses the directory, that the client refuses
// to send its password to a server run by another user, and that once the
// directory is the user's own (0700) the other user can put nothing in it.
func TestSocketSquatting(t *testing.T) {
	victim, attacker := needOtherUsers(t)
	tmp := shareDir(t, 0o1777)
	bins := shareDir(t, 0o755)
	server := shareBin(t, bins, testproc.Build(t, "./cmd/goblin-server"))
	cli := shareBin(t, bins, testproc.Build(t, "./cmd/goblin-client"))
	squatter := shareBin(t, bins, testproc.Build(t, "./reliability/testdata/squatter"))
	private := filepath.Join(tmp, fmt.Sprintf("goblin-%d", victim[0]))
	sock := filepath.Join(private, "goblin.sock") // the victim's default socket
	const password = "s3cret-squat-pw"

	// The other user gets there first.
	record := filepath.Join(tmp, "squatter.log")
	sq, err := testproc.StartCmd(as(attacker, tmp, squatter, nil, sock, record))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Stop(5 * time.Second) })
	sq.WaitLog(t, "listening", 30*time.Second)

	// The server will not bind in a directory another user made.
	p, err := testproc.StartCmd(as(victim, tmp, server, nil, "--metrics", "off", "--listen", "uds://"+sock))
	if err != nil {
		t.Fatal(err)
	}
	code, err := p.Wait(60 * time.Second)
	if err != nil || code != 1 || !strings.Contains(p.Log(), "unsafe socket directory") || !strings.Contains(p.Log(), fmt.Sprintf("belongs to uid %d", attacker[0])) {
		t.Errorf("goblin-server in the other user's directory: exit %d, %v; log:\n%s", code, err, p.Log())
	}

	// The client dials its default socket, finds the other user's server
	// there and does not send the password.
	c := as(victim, tmp, cli, []string{"GOBLIN_PASSWORD=" + password}, "PING")
	out, err := c.CombinedOutput()
	t.Logf("goblin-client against the squatter: %v\n%s", err, out)
	if err == nil || !strings.Contains(string(out), fmt.Sprintf("runs as uid %d", attacker[0])) {
		t.Errorf("goblin-client: %v, want a refusal naming the other user:\n%s", err, out)
	}
	got, _ := os.ReadFile(record)
	if bytes.Contains(got, []byte(password)) {
		t.Errorf("the other user's listener received the password: %q", got)
	}

	// Without the squatter, the server makes the directory its own.
	sq.Stop(5 * time.Second)
	if err := os.RemoveAll(private); err != nil {
		t.Fatal(err)
	}
	p, err = testproc.StartCmd(as(victim, tmp, server, []string{"GOBLIN_REQUIREPASS=" + password}, "--metrics", "off", "--listen", "uds://"+sock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(10 * time.Second) })
	p.WaitLog(t, "msg=ready", 60*time.Second)
	fi, err := os.Stat(private)
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != victim[0] || fi.Mode().Perm() != 0o700 {
		t.Errorf("the socket directory is owned by uid %d with mode %04o, want uid %d and 0700", st.Uid, fi.Mode().Perm(), victim[0])
	}
	if out, err := as(attacker, tmp, "/usr/bin/touch", nil, filepath.Join(private, "planted")).CombinedOutput(); err == nil {
		t.Errorf("the other user could create a file in the private socket directory: %s", out)
	}
	// The user's own client authenticates with the password, given in the
	// environment on both sides.
	out, err = as(victim, tmp, cli, []string{"GOBLIN_PASSWORD=" + password}, "PING").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "PONG" {
		t.Errorf("goblin-client with the password against the user's own server: %v\n%s", err, out)
	}
	// And root's client library, which does not know this user, refuses
	// to send it the password unless told to trust it.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := (client.Options{Password: password}).Dial(ctx, "uds://"+sock); !errors.Is(err, client.ErrUntrustedServer) {
		t.Errorf("root's client sent the password to another user's server: %v", err)
	}
	gc, err := client.Options{Password: password, TrustedServerUIDs: []int{victim[0]}}.Dial(ctx, "uds://"+sock)
	if err != nil {
		t.Fatalf("with the server's user trusted: %v", err)
	}
	defer gc.Close()
	if err := gc.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestPasswordGuessingIsThrottled reproduces unthrottled guessing: one
// connection pipelining wrong passwords got 1.4 M guesses a second, and
// nothing was logged. Now each wrong password ends the client's batch, the
// first three are free and the next wait 100 ms, 200 ms, 400 ms, ... (at
// most 5 s) before the client's next request is served, and failures are
// logged. The test counts the guesses one connection gets answered in
// three seconds while another client works normally.
func TestPasswordGuessingIsThrottled(t *testing.T) {
	g := startGoblin(t, "--requirepass", "the-real-one")
	guesser := g.dial(t)
	var guesses bytes.Buffer
	for i := 0; i < 100000; i++ {
		fmt.Fprintf(&guesses, "AUTH guess%d\r\n", i)
	}
	go guesser.Write(guesses.Bytes())
	answered := make(chan int, 1)
	go func() {
		r := bufio.NewReader(guesser)
		n := 0
		guesser.SetReadDeadline(time.Now().Add(3 * time.Second))
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				answered <- n
				return
			}
			if strings.HasPrefix(line, "-WRONGPASS") {
				n++
			}
		}
	}()
	other := g.dial(t)
	fmt.Fprintf(other, "AUTH the-real-one\r\nPING\r\n")
	r := bufio.NewReader(other)
	for _, want := range []string{"+OK\r\n", "+PONG\r\n"} {
		other.SetReadDeadline(time.Now().Add(10 * time.Second))
		if line, err := r.ReadString('\n'); err != nil || line != want {
			t.Fatalf("the other client: %q %v, want %q", line, err, want)
		}
	}
	n := <-answered
	logged := strings.Count(g.p.Log(), "authentication failed")
	t.Logf("one connection got %d wrong passwords answered in 3 s (%.1f guesses/s); %d failures logged", n, float64(n)/3, logged)
	if n > 20 {
		t.Errorf("%d guesses answered in 3 s, want at most 20", n)
	}
	if logged == 0 {
		t.Errorf("no authentication failure logged:\n%s", g.p.Log())
	}
}
