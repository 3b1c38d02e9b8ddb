package ring_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/idle"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/server"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/ring"
)

// startRole re-executes the test binary in a helper role.
func startRole(t *testing.T, role, dir string, p proto.Protocol, env ...string) *testproc.Proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GOBLIN_RING_ROLE="+role, "GOBLIN_RING_DIR="+dir, "GOBLIN_RING_PROTO="+p.String())
	cmd.Env = append(cmd.Env, env...)
	proc, err := testproc.StartCmd(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		proc.Stop(10 * time.Second)
		if t.Failed() {
			t.Logf("log of %s (pid %d):\n%s", role, proc.PID, proc.Log())
		}
	})
	return proc
}

func startServerProc(t *testing.T, dir string, p proto.Protocol, env ...string) *testproc.Proc {
	t.Helper()
	s := startRole(t, "server", dir, p, env...)
	s.WaitLog(t, `^ready`, 60*time.Second)
	return s
}

func startClientProc(t *testing.T, dir string, p proto.Protocol, id int, n int64) *testproc.Proc {
	return startRole(t, "client", dir, p, fmt.Sprintf("GOBLIN_RING_ID=%d", id), fmt.Sprintf("GOBLIN_RING_N=%d", n))
}

// serverRings counts the ring memfds the server process maps: one per
// connected client.
func serverRings(t *testing.T, p *testproc.Proc) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", p.PID))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "/memfd:goblin-ring ")
}

func dial(t *testing.T, dir string, o ring.DialOptions) *ring.Conn {
	t.Helper()
	if o.Wait == idle.Spin {
		o.Wait = idle.Backoff
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := ring.Dial(ctx, dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// stop sends SIGSTOP and waits until every thread of the process has
// stopped: kill(2) returns before a thread running on another CPU is
// actually halted. The cleanup continues it, so it can be stopped cleanly.
func stop(t *testing.T, p *testproc.Proc) {
	t.Helper()
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Signal(syscall.SIGCONT) })
	testkit.Eventually(t, 30*time.Second, "the server's threads to stop", func() (bool, string) {
		tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", p.PID))
		if err != nil || len(tasks) == 0 {
			return false, ""
		}
		for _, f := range tasks {
			b, err := os.ReadFile(f)
			if err != nil {
				return false, ""
			}
			// The state follows the command name in parentheses.
			i := strings.LastIndexByte(string(b), ')')
			if i < 0 || i+2 >= len(b) || (b[i+2] != 'T' && b[i+2] != 't') {
				return false, ""
			}
		}
		return true, ""
	})
}

func waitExit(t *testing.T, p *testproc.Proc, timeout time.Duration) {
	t.Helper()
	code, err := p.Wait(timeout)
	if err != nil || code != 0 {
		t.Fatalf("client pid %d: exit %d, %v\n%s", p.PID, code, err, p.Log())
	}
}

// TestInProcessEngine runs the real engine and loop in this process and
// checks the workload over both protocols.
func TestInProcessEngine(t *testing.T) {
	for _, p := range []proto.Protocol{proto.RESP, proto.SBE} {
		t.Run(p.String(), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ring")
			rs, loop, err := newServer(dir, p, server.IdleYield)
			if err != nil {
				t.Fatal(err)
			}
			go loop.Run()
			t.Cleanup(func() { loop.Stop(); <-loop.Done() })
			if rs.Name() != "ring/"+p.String() {
				t.Fatalf("name %q", rs.Name())
			}
			c := dial(t, dir, ring.DialOptions{Proto: p})
			w := newWorkload(1, p, 16)
			if err := w.run(c, 5000); err != nil {
				t.Fatal(err)
			}
			loop.Stop()
			<-loop.Done()
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Fatalf("the ring directory outlives a clean shutdown: %v", err)
			}
		})
	}
}

// TestClientKilledMidRequest: several client processes run checked
// workloads; one is SIGKILLed while pipelining. The server reclaims the
// dead client's rings while the others stay connected, and the others then
// finish with every reply right.
func TestClientKilledMidRequest(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ring")
	gate := filepath.Join(t.TempDir(), "go")
	srv := startServerProc(t, dir, proto.RESP)
	victim := startClientProc(t, dir, proto.RESP, 0, 1<<40)
	victim.WaitLog(t, `^running`, 60*time.Second)
	var others []*testproc.Proc
	for id := 1; id <= 3; id++ {
		others = append(others, startRole(t, "client", dir, proto.RESP,
			fmt.Sprintf("GOBLIN_RING_ID=%d", id), "GOBLIN_RING_N=10000", "GOBLIN_RING_GATE="+gate))
	}
	for _, p := range others {
		p.WaitLog(t, `^phase1`, 60*time.Second)
	}
	if got := serverRings(t, srv); got != 4 {
		t.Fatalf("the server maps %d rings with four clients connected", got)
	}
	if err := victim.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	victim.Wait(10 * time.Second)
	testkit.Eventually(t, 30*time.Second, "the killed client's rings reclaimed", func() (bool, string) { return serverRings(t, srv) == 3, "" })
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range others {
		waitExit(t, p, 120*time.Second)
		if !strings.Contains(p.Log(), "done requests=20000") {
			t.Fatalf("client log: %s", p.Log())
		}
	}
	testkit.Eventually(t, 30*time.Second, "every ring reclaimed", func() (bool, string) { return serverRings(t, srv) == 0, "" })
	// The server still serves.
	c := dial(t, dir, ring.DialOptions{})
	w := newWorkload(9, proto.RESP, 8)
	if err := w.run(c, 1000); err != nil {
		t.Fatal(err)
	}
}

// TestServerKilledWhileClientWaits: a client waiting for a reply returns
// ErrServerGone soon after the server is SIGKILLed, well within its
// deadline. The server is stopped (SIGSTOP) first so the request is surely
// unanswered while the client waits.
func TestServerKilledWhileClientWaits(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ring")
	srv := startServerProc(t, dir, proto.RESP)
	c := dial(t, dir, ring.DialOptions{Wait: idle.Backoff})
	w := newWorkload(1, proto.RESP, 1)
	if err := w.run(c, 10); err != nil {
		t.Fatal(err)
	}
	stop(t, srv)
	if err := c.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		t.Fatal(err)
	}
	const deadline = 20 * time.Second
	c.SetDeadline(time.Now().Add(deadline))
	type result struct {
		err error
		d   time.Duration
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		_, err := c.ReadAppend(nil)
		done <- result{err, time.Since(start)}
	}()
	select {
	case r := <-done:
		t.Fatalf("read returned before the server died: %v", r.err)
	case <-time.After(100 * time.Millisecond):
	}
	killed := time.Now()
	srv.Signal(syscall.SIGKILL)
	r := <-done
	if !errors.Is(r.err, transport.ErrServerGone) {
		t.Fatalf("waiting client got %v, want ErrServerGone", r.err)
	}
	if r.d >= deadline {
		t.Fatalf("client noticed after %v, not within its %v deadline", r.d, deadline)
	}
	t.Logf("client noticed the dead server %v after SIGKILL", time.Since(killed))
	if err := c.Write([]byte("*1\r\n$4\r\nPING\r\n")); !errors.Is(err, transport.ErrServerGone) {
		t.Fatalf("write after the server died: %v", err)
	}
}

// TestStoppedServerHeartbeat: a server that is alive but stuck (SIGSTOP)
// stops beating; a waiting client gives up after ServerTimeout.
func TestStoppedServerHeartbeat(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ring")
	srv := startServerProc(t, dir, proto.RESP)
	c := dial(t, dir, ring.DialOptions{Wait: idle.Backoff, ServerTimeout: 300 * time.Millisecond})
	stop(t, srv)
	c.Write([]byte("*1\r\n$4\r\nPING\r\n"))
	c.SetDeadline(time.Now().Add(20 * time.Second))
	_, err := c.ReadAppend(nil)
	if !errors.Is(err, transport.ErrServerGone) || !strings.Contains(err.Error(), "heartbeat") {
		t.Fatalf("client of a stopped server got %v, want ErrServerGone (heartbeat)", err)
	}
}

// TestRestartSweepsLeftovers: a SIGKILLed server leaves only its socket
// and lock file, no ring memory (a crash once left 2 MiB ring files
// until the next start); its clients' rings go
// with their last mapping; the next server sweeps the socket and serves; a
// clean stop leaves nothing.
func TestRestartSweepsLeftovers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ring")
	srv := startServerProc(t, dir, proto.SBE)
	var conns []*ring.Conn
	for i := range 3 {
		c := dial(t, dir, ring.DialOptions{Proto: proto.SBE})
		if err := newWorkload(i, proto.SBE, 4).run(c, 100); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	if got := serverRings(t, srv); got != 3 {
		t.Fatalf("the server maps %d rings, want 3", got)
	}
	srv.Signal(syscall.SIGKILL)
	srv.Wait(10 * time.Second)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != "ctl.sock" && e.Name() != "lock" {
			t.Errorf("a SIGKILLed server left %s behind", e.Name())
		}
	}
	for _, c := range conns {
		c.Close() // the last mapping of each ring: its memory is freed
	}
	if n := strings.Count(readSelfMaps(t), "/memfd:goblin-ring "); n != 0 {
		t.Fatalf("%d ring mappings remain in the client after Close", n)
	}
	srv2 := startServerProc(t, dir, proto.SBE)
	if !strings.Contains(srv2.Log(), "swept=1") { // the socket
		t.Fatalf("restarted server: %s", srv2.Log())
	}
	c := dial(t, dir, ring.DialOptions{Proto: proto.SBE})
	if err := newWorkload(7, proto.SBE, 4).run(c, 100); err != nil {
		t.Fatal(err)
	}
	if code := srv2.Stop(30 * time.Second); code != 0 {
		t.Fatalf("server exit %d\n%s", code, srv2.Log())
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		ents, _ := os.ReadDir(dir)
		t.Fatalf("files outlive a clean shutdown: %v", ents)
	}
}

func readSelfMaps(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStress: 8 client processes pipeline checked SET/GET requests with
// varying values against one server process. 30,000 requests per client
// by default, which is what the race run does (the race detector needs the
// concurrency, not the volume: a client's ring has 64 records, so 30,000
// requests wrap it hundreds of times); GOBLIN_RING_STRESS_REQUESTS sets
// the number, as `make stress` does without the race detector (200,000),
// and GOBLIN_RING_STRESS_FULL=1 runs 1,000,000.
func TestStress(t *testing.T) {
	n := int64(30_000)
	if v, err := strconv.ParseInt(os.Getenv("GOBLIN_RING_STRESS_REQUESTS"), 10, 64); err == nil && v > 0 {
		n = v
	}
	if os.Getenv("GOBLIN_RING_STRESS_FULL") == "1" {
		n = 1_000_000
	}
	if testing.Short() {
		n = 10_000
	}
	for _, p := range []proto.Protocol{proto.RESP, proto.SBE} {
		t.Run(p.String(), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ring")
			startServerProc(t, dir, p, "GOBLIN_RING_IDLE="+server.IdleYield)
			start := time.Now()
			var clients []*testproc.Proc
			for id := range 8 {
				clients = append(clients, startClientProc(t, dir, p, id, n))
			}
			var wg sync.WaitGroup
			for _, c := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					code, err := c.Wait(20 * time.Minute)
					if err != nil || code != 0 || !strings.Contains(c.Log(), fmt.Sprintf("done requests=%d", n)) {
						t.Errorf("client pid %d: exit %d %v: %s", c.PID, code, err, c.Log())
					}
				}()
			}
			wg.Wait()
			d := time.Since(start)
			t.Logf("8 clients × %d requests over %s rings in %v (%.0f requests/s)", n, p, d, float64(8*n)/d.Seconds())
		})
	}
}

// TestPermissionDenied: a user who may not reach the handshake socket is
// told permission denied and what to do, not that no server runs there
// (which the CLI once said). Root may open anything, so as root the dialling
// process runs as nobody; otherwise the directory is made unsearchable.
func TestPermissionDenied(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ring")
	_, loop, err := newServer(dir, proto.RESP, server.IdleYield)
	if err != nil {
		t.Fatal(err)
	}
	go loop.Run()
	t.Cleanup(func() { loop.Stop(); <-loop.Done() })
	var out string
	if os.Geteuid() == 0 {
		// The test binary sits in a directory only root may enter: run a
		// copy nobody may execute.
		bin := filepath.Join(worldDir(t), "ring.test")
		b, err := os.ReadFile(os.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, b, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "-test.run=^$")
		cmd.Env = append(os.Environ(), "GOBLIN_RING_ROLE=dial", "GOBLIN_RING_DIR="+dir)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		o, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("nobody dialled root's ring: %s", o)
		}
		out = string(o)
	} else {
		if err := os.Chmod(dir, 0); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(dir, 0o700)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := ring.Dial(ctx, dir, ring.DialOptions{AnyProto: true})
		if err == nil {
			t.Fatal("dialled through a directory of mode 0")
		}
		out = fmt.Sprintf("dial error: %v (permission: %t)", err, errors.Is(err, ring.ErrPermission) && errors.Is(err, os.ErrPermission))
	}
	t.Log(out)
	if !strings.Contains(out, "permission denied") || !strings.Contains(out, "(permission: true)") || strings.Contains(out, "no server") {
		t.Fatalf("a refused user was told %q, want permission denied (and ErrPermission), not no server", out)
	}
}

// worldDir makes a directory every user may enter, removed in cleanup.
func worldDir(t *testing.T) string {
	d, err := os.MkdirTemp("", "goblin-ring-perm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}
