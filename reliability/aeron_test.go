package reliability

// The Aeron listener under attack and after crashes (a driver directory
// other users must not read, a killed driver or server that clients and
// restarts must survive, hostile clients of the chunked messages): real
// goblin-server processes with their supervised Java media drivers, each
// test logging the figure it measures.

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	ae "github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/javadriver"
	"github.com/goblin-kv/goblin/client"
	"github.com/goblin-kv/goblin/internal/shm"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/accesstest"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/transport"
	_ "github.com/goblin-kv/goblin/transport/aeron" // client.Dial of aeron: targets
)

// needJavaDriver skips (fails under CI=true) without java or the jar.
func needJavaDriver(t *testing.T) {
	t.Helper()
	_, err := javadriver.FindJava()
	if err == nil {
		_, err = javadriver.FindJar("")
	}
	testkit.Require(t, "the Java media driver", err)
}

// The media drivers an aeron:ipc listener can run: goblin's Go driver
// inside goblin-server (the default) or the supervised Java driver.
var aeronDrivers = []string{"go", "java"}

// aeronServer is a goblin-server with one aeron:ipc listener running its
// own media driver in dir.
type aeronServer struct {
	p      *testproc.Proc
	dir    string
	target string // what clients dial
	driver int    // the media driver's pid: goblin-server's own for the Go driver
	ready  time.Duration
}

// startAeronServer starts goblin-server listening on
// aeron:ipc?proto=resp|dir=DIR|driver=DRIVER plus params ("|group=…") and
// waits until it is ready.
func startAeronServer(t *testing.T, dir, driver, params string) *aeronServer {
	t.Helper()
	if driver == "java" {
		needJavaDriver(t)
	}
	bin := testproc.Build(t, "./cmd/goblin-server")
	s := &aeronServer{dir: dir, target: "aeron:ipc?proto=resp|dir=" + dir}
	start := time.Now()
	s.p = testproc.Start(t, bin, "--metrics", "off", "--log-level", "debug", "--listen", s.target+"|driver="+driver+params)
	s.p.WaitLog(t, `msg=ready`, 120*time.Second)
	s.ready = time.Since(start)
	s.driver = s.p.PID
	if driver == "java" {
		pid, err := strconv.Atoi(s.p.WaitLog(t, `aeron media driver started.*pid=(\d+)`, time.Second))
		if err != nil {
			t.Fatal(err)
		}
		s.driver = pid
	}
	return s
}

func dialAeron(t *testing.T, tgt string) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := client.Options{DialTimeout: time.Minute}.Dial(ctx, tgt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// processGone reports whether pid has exited (or is a zombie).
func processGone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z' || b[i+2] == 'X'
}

// TestAeronDirectoryIsPrivate: another local user reads nothing of a
// server's Aeron directory — not the CnC file, not the log buffers that
// hold every request and reply (a SET of a secret value went through
// them) — and, with group=, members of the group can use the server while
// everyone else still cannot; with goblin's Go driver and with the Java
// driver. Before the fix the Java driver ran with the inherited umask:
// directory 0755, log buffers 0644.
func TestAeronDirectoryIsPrivate(t *testing.T) {
	accesstest.Need(t)
	ctx := context.Background()
	// goblin-client run as a member of the group, and as nobody: the binary
	// must be where both can run it.
	bin := filepath.Join(filepath.Dir(accesstest.ShmDir(t, "goblin-reliability-bin-")), "goblin-client")
	b, err := os.ReadFile(testproc.Build(t, "./cmd/goblin-client"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(tgt string, u accesstest.User) (string, error) {
		cmd := exec.Command(bin, "--target", tgt, "--timeout", "30s", "ping")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: u.UID, Gid: u.GID, Groups: u.Groups}}
		cmd.Env = []string{"HOME=/", "PATH=/usr/bin:/bin"}
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	for _, drv := range aeronDrivers {
		t.Run(drv, func(t *testing.T) {
			dir := accesstest.ShmDir(t, "goblin-reliability-")
			s := startAeronServer(t, dir, drv, "")
			c := dialAeron(t, s.target)
			if err := c.Set(ctx, "password", []byte("hunter2-secret-value"), client.SetOptions{}); err != nil {
				t.Fatal(err)
			}
			n := accesstest.CheckPrivate(t, dir, accesstest.Nobody)
			logs, _ := filepath.Glob(filepath.Join(dir, "publications", "*.logbuffer"))
			t.Logf("%s driver: checked %d paths (%d log buffers) under %s from uid %d", drv, n, len(logs), dir, accesstest.Nobody.UID)
			if out, err := run(s.target, accesstest.Nobody); err == nil {
				t.Fatalf("uid %d reached the server: %q", accesstest.Nobody.UID, out)
			}
		})
		t.Run(drv+"/group", func(t *testing.T) {
			const gid = 4243
			dir := accesstest.ShmDir(t, "goblin-reliability-")
			s := startAeronServer(t, dir, drv, "|group="+strconv.Itoa(gid))
			if out, err := run(s.target, accesstest.Member(gid)); err != nil || out != "PONG" {
				t.Fatalf("a member of group %d: %q, %v", gid, out, err)
			}
			if out, err := run(s.target, accesstest.Nobody); err == nil {
				t.Fatalf("uid %d, not in the group, reached the server: %q", accesstest.Nobody.UID, out)
			} else {
				t.Logf("outside the group: %s", out)
			}
			accesstest.CheckPrivate(t, dir, accesstest.Nobody)
		})
	}
}

// TestAeronDriverKillClientResumes: the server's media driver is killed
// (SIGKILL); the server starts a new one in the same directory, and a
// connected client notices the restart — its call fails with the driver
// replaced, not after the driver timeout on the dead driver's stale
// heartbeat (60 s here, so the old behaviour cannot pass) — and its next
// calls dial again and succeed. Logs the time from the kill to the error
// and to the first PING answered again.
func TestAeronDriverKillClientResumes(t *testing.T) {
	ctx := context.Background()
	s := startAeronServer(t, accesstest.ShmDir(t, "goblin-reliability-"), "java", "")
	c := dialAeron(t, s.target+"|driver-timeout=60s")
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	if err := syscall.Kill(s.driver, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var first error
	var failedAfter time.Duration
	for first == nil {
		cctx, cancel := context.WithTimeout(ctx, 90*time.Second)
		first = c.Ping(cctx)
		cancel()
		if time.Since(killed) > 90*time.Second {
			t.Fatal("PINGs still answered 90 s after the driver was killed")
		}
	}
	failedAfter = time.Since(killed)
	if !errors.Is(first, ae.ErrDriverReplaced) || !errors.Is(first, transport.ErrServerGone) {
		t.Fatalf("first error after the kill: %v; want ErrServerGone because the driver was replaced", first)
	}
	testkit.Eventually(t, 120*time.Second, "PING to be answered again", func() (bool, string) {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return c.Ping(cctx) == nil, ""
	})
	resumed := time.Since(killed)
	restarted := s.p.WaitLog(t, `aeron media driver restarted.*pid=(\d+)`, time.Second)
	t.Logf("driver %d killed: the client's call failed after %v (%v); PING answered again after %v (new driver %s)",
		s.driver, failedAfter.Round(time.Millisecond), first, resumed.Round(time.Millisecond), restarted)
}

// TestAeronServerKillLeavesNothing: a server killed with SIGKILL takes
// its Java media driver and the driver's directory (tens of MiB in
// /dev/shm) with it; a new server in the same directory starts at once,
// whether the old driver is still shutting down or was killed too. Before
// the fix the directory stayed until the next start, and a restart was
// refused while the dead driver's heartbeat was fresh. goblin's Go driver
// runs inside the server, so it cannot clean up after a SIGKILL: its
// directory stays until the next start there, which clears it at once. A
// client of the killed server notices the new driver and resumes. Logs the
// time until the directory is gone and the restarts' time to ready.
func TestAeronServerKillLeavesNothing(t *testing.T) {
	t.Run("java", func(t *testing.T) {
		dir := accesstest.ShmDir(t, "goblin-reliability-")
		s := startAeronServer(t, dir, "java", "")
		killed := time.Now()
		s.p.Signal(syscall.SIGKILL)
		testkit.Eventually(t, 60*time.Second, "the crashed server's Aeron directory to go", func() (bool, string) {
			_, err := os.Stat(dir)
			return errors.Is(err, os.ErrNotExist), ""
		})
		gone := time.Since(killed)
		testkit.Eventually(t, 30*time.Second, "the old driver to exit", func() (bool, string) { return processGone(s.driver), "" })
		t.Logf("server killed: driver %d and its directory gone after %v (a fresh start took %v to ready)",
			s.driver, gone.Round(time.Millisecond), s.ready.Round(time.Millisecond))

		// Killed, and restarted at once: the old driver is still shutting
		// down (an orphan) when the new server claims the directory.
		s = startAeronServer(t, dir, "java", "")
		s.p.Signal(syscall.SIGKILL)
		s.p.Wait(30 * time.Second)
		s2 := startAeronServer(t, dir, "java", "")
		t.Logf("killed and restarted at once: ready after %v (old driver %d gone: %v)",
			s2.ready.Round(time.Millisecond), s.driver, processGone(s.driver))
		c := dialAeron(t, s2.target)
		if err := c.Ping(context.Background()); err != nil {
			t.Fatal(err)
		}

		// Server and driver killed together: the directory stays, its
		// heartbeat fresh, nobody to delete it; the next server starts
		// anyway, and the client resumes on it.
		s2.p.Signal(syscall.SIGKILL)
		syscall.Kill(s2.driver, syscall.SIGKILL)
		s2.p.Wait(30 * time.Second)
		s3 := startAeronServer(t, dir, "java", "")
		t.Logf("server and driver killed together, restarted at once: ready after %v", s3.ready.Round(time.Millisecond))
		resume(t, c)
	})
	t.Run("go", func(t *testing.T) {
		dir := accesstest.ShmDir(t, "goblin-reliability-")
		s := startAeronServer(t, dir, "go", "")
		c := dialAeron(t, s.target)
		if err := c.Ping(context.Background()); err != nil {
			t.Fatal(err)
		}
		s.p.Signal(syscall.SIGKILL)
		s.p.Wait(30 * time.Second)
		if _, err := os.Stat(filepath.Join(dir, ae.CnCFile)); err != nil {
			t.Fatalf("the killed server's in-process driver left no CnC file: %v", err)
		}
		s2 := startAeronServer(t, dir, "go", "")
		t.Logf("Go driver: the killed server's directory stayed until the restart, which was ready after %v (a fresh start: %v)",
			s2.ready.Round(time.Millisecond), s.ready.Round(time.Millisecond))
		resume(t, c)
	})
}

// resume checks that c, a client of a server that was killed, fails its
// next call because the driver it knew was replaced, and then dials the
// new server and is answered.
func resume(t *testing.T, c *client.Client) {
	t.Helper()
	ctx := context.Background()
	start := time.Now()
	var first error
	testkit.Eventually(t, 120*time.Second, "the client to be answered by the new server", func() (bool, string) {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		err := c.Ping(cctx)
		if err != nil && first == nil {
			first = err
		}
		return err == nil, ""
	})
	if first == nil || !errors.Is(first, ae.ErrDriverReplaced) {
		t.Fatalf("the client's first error after the restart: %v; want the driver replaced", first)
	}
	t.Logf("the old server's client resumed after %v (first: %v)", time.Since(start).Round(time.Millisecond), first)
}

// rawClient is a hostile Aeron client of a goblin server: it connects as
// goblin's client does, then sends whatever bytes it likes.
type rawClient struct {
	ac  *ae.Client
	pub *ae.ExclusivePublication
	img *ae.Image
}

func dialRaw(t *testing.T, dir string) *rawClient {
	t.Helper()
	ac, err := ae.Connect(ae.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ac.Close() })
	sub, err := ac.AddSubscription("aeron:ipc?control-mode=response", 1002)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ac.AddExclusivePublication("aeron:ipc?response-correlation-id="+strconv.FormatInt(sub.RegistrationID(), 10), 1001)
	if err != nil {
		t.Fatal(err)
	}
	r := &rawClient{ac: ac, pub: pub}
	testkit.Eventually(t, 60*time.Second, "the server to answer the raw client", func() (bool, string) {
		if imgs := sub.Images(); pub.IsConnected() && len(imgs) > 0 {
			r.img = imgs[0]
		}
		return r.img != nil, ""
	})
	r.read(t) // the server's hello
	return r
}

func (r *rawClient) send(t *testing.T, msg []byte) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for r.pub.Offer(msg) < 0 {
		if time.Now().After(deadline) {
			t.Fatal("the raw client could not send")
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// read returns the next message, or nil if the stream ended first.
func (r *rawClient) read(t *testing.T) []byte {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m, ok := r.img.NextMessage(nil); ok {
			return m
		}
		if r.img.IsClosed() || r.img.IsEndOfStream() {
			return nil
		}
		if time.Now().After(deadline) {
			t.Fatal("no message for the raw client in 30 s")
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// chunkFrame builds a goblin chunk frame by hand (transport/aeron's
// frame.go documents the layout).
func chunkFrame(offset, total uint32, piece []byte) []byte {
	b := []byte{0xA7, 'g', 'b', 'A', 2, 1, 0, 0}
	b = append(b, byte(offset), byte(offset>>8), byte(offset>>16), byte(offset>>24))
	b = append(b, byte(total), byte(total>>8), byte(total>>16), byte(total>>24))
	return append(b, piece...)
}

// pingWhile measures another client's PING round trips while attack runs.
func pingWhile(t *testing.T, c *client.Client, attack func()) latencies {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); attack() }()
	var l latencies
	ctx := context.Background()
	for {
		select {
		case <-done:
			slices.Sort(l)
			return l
		default:
		}
		start := time.Now()
		if err := c.Ping(ctx); err != nil {
			t.Errorf("another client's PING during the attack: %v", err)
			<-done
			return l
		}
		l = append(l, time.Since(start))
	}
}

// TestAeronHostileClients: Aeron clients that break goblin's protocol on
// purpose — a request that claims to be longer than the server accepts,
// chunk frames out of order, and a frame length written straight into the
// IPC log that no publisher following Aeron's protocol writes (which
// crashed the server's loop with a slice-bounds panic before the fix) —
// get an error or stall themselves; the server and another client go on.
// Logs the other client's PING p50/p99 during each attack.
func TestAeronHostileClients(t *testing.T) {
	for _, drv := range aeronDrivers {
		t.Run(drv, func(t *testing.T) { hostileClients(t, drv) })
	}
}

func hostileClients(t *testing.T, drv string) {
	s := startAeronServer(t, accesstest.ShmDir(t, "goblin-reliability-"), drv, "")
	good := dialAeron(t, s.target)
	ctx := context.Background()

	t.Run("too long", func(t *testing.T) {
		r := dialRaw(t, s.dir)
		var reply []byte
		const total = 80 << 20 // more than the default 64 MiB request limit
		l := pingWhile(t, good, func() {
			// The server answers at the first piece and drops the rest as
			// they come, keeping none of them.
			piece := make([]byte, r.pub.MaxMessageLength()-16)
			for off := 0; off < total; off += len(piece) {
				r.send(t, chunkFrame(uint32(off), total, piece[:min(len(piece), total-off)]))
			}
			reply = r.read(t)
		})
		if !strings.Contains(string(reply), "exceeds the server's request limit of 67108864 bytes") {
			t.Fatalf("reply to an 80 MiB request: %q", reply)
		}
		r.send(t, resp.AppendCommandString(nil, "PING"))
		if got := r.read(t); string(got) != "+PONG\r\n" {
			t.Fatalf("the refused client's next request: %q", got)
		}
		t.Logf("80 MiB request refused, the client stays; other client's PING meanwhile: %v", l)
	})

	t.Run("out of order", func(t *testing.T) {
		r := dialRaw(t, s.dir)
		r.send(t, chunkFrame(0, 10, []byte("abc")))
		r.send(t, chunkFrame(7, 10, []byte("def")))
		if got := r.read(t); !strings.Contains(string(got), "malformed goblin frame") {
			t.Fatalf("reply to a gap: %q", got)
		}
		if got := r.read(t); got != nil {
			t.Fatalf("the connection stayed open after a malformed frame: %q", got)
		}
	})

	t.Run("bad frame length in the log", func(t *testing.T) {
		r := dialRaw(t, s.dir)
		r.send(t, resp.AppendCommandString(nil, "PING"))
		if got := r.read(t); string(got) != "+PONG\r\n" {
			t.Fatalf("raw PING: %q", got)
		}
		// Write a data frame of length 5 (shorter than its own header)
		// where the next frame goes: a committed frame to the server.
		logPath := filepath.Join(s.dir, "publications", strconv.FormatInt(r.pub.RegistrationID(), 10)+".logbuffer")
		mem, err := shm.Map(logPath)
		if err != nil {
			t.Fatal(err)
		}
		defer shm.Unmap(mem)
		pos := r.pub.Position()
		term := r.pub.TermBufferLength()
		at := int(pos/int64(term))%3*term + int(pos)&(term-1) // partition, then offset in it
		mem[at+5], mem[at+6], mem[at+7] = 0xC0, 1, 0          // flags, type DATA
		shm.StoreInt32Release(mem, at, 5)
		l := pingWhile(t, good, func() { time.Sleep(2 * time.Second) })
		if s.p.Exited() {
			t.Fatalf("the server died:\n%s", s.p.Log())
		}
		t.Logf("other client's PING with a bad frame in a neighbour's log: %v", l)
	})

	if err := good.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if s.p.Exited() {
		t.Fatalf("the server exited:\n%s", s.p.Log())
	}
}
