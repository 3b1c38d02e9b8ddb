package reliability

// The shared-memory ring under attack by its own clients (a client that
// resizes its ring file once killed the server), and after a crash (which
// once left ring memory behind).

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/client"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/latency"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
	_ "github.com/goblin-kv/goblin/transport/ring" // client.Dial of ring:// targets
)

// startRingServer runs goblin-server with one ring listener in a fresh
// directory and returns the process and the directory.
func startRingServer(t *testing.T, p string) (*testproc.Proc, string) {
	t.Helper()
	bin := testproc.Build(t, "./cmd/goblin-server")
	dir := filepath.Join(t.TempDir(), "ring")
	srv := testproc.Start(t, bin, "--metrics", "off", "--listen", "ring://"+dir+"?proto="+p)
	srv.WaitLog(t, `msg=ready`, 60*time.Second)
	return srv, dir
}

// pingers keeps n ring clients sending PINGs until stopped, recording
// every round trip and counting failures.
type pingers struct {
	lat    *latency.Recorder
	mu     sync.Mutex
	errs   atomic.Int64
	first  atomic.Value // the first error
	stop   chan struct{}
	wg     sync.WaitGroup
	rounds atomic.Int64
}

func startPingers(t *testing.T, tgt string, n int) *pingers {
	t.Helper()
	ps := &pingers{lat: latency.New(), stop: make(chan struct{})}
	for range n {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		c, err := client.Dial(ctx, tgt)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		ps.wg.Add(1)
		go func() {
			defer ps.wg.Done()
			for {
				select {
				case <-ps.stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				start := time.Now()
				err := c.Ping(ctx)
				cancel()
				if err != nil {
					if ps.errs.Add(1) == 1 {
						ps.first.Store(err)
					}
					time.Sleep(10 * time.Millisecond)
					continue
				}
				d := time.Since(start)
				ps.mu.Lock()
				ps.lat.RecordDuration(d)
				ps.mu.Unlock()
				ps.rounds.Add(1)
			}
		}()
	}
	return ps
}

// take returns the round trips recorded so far and starts afresh.
func (ps *pingers) take() latency.Summary {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	s := ps.lat.Summary()
	ps.lat.Reset()
	return s
}

// halt stops the pingers and returns their failures.
func (ps *pingers) halt() int64 {
	close(ps.stop)
	ps.wg.Wait()
	return ps.errs.Load()
}

// attacker is a ring client speaking the handshake by hand, so it holds the
// descriptor of its shared memory and can do to it what any client can.
type attacker struct {
	sock, mfd int
	answer    string
}

// handshake connects to the ring server in dir as a client of the current
// ring version (2) and keeps whatever the server hands over.
func handshake(t *testing.T, dir string) *attacker {
	t.Helper()
	a := &attacker{sock: -1, mfd: -1}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	a.sock = fd
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: filepath.Join(dir, "ctl.sock")}); err != nil {
		t.Fatal(err)
	}
	if _, err := unix.Write(fd, []byte("GOBLIN-RING 2 proto=any\n")); err != nil {
		t.Fatal(err)
	}
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Sec: 10})
	buf, oob := make([]byte, 512), make([]byte, unix.CmsgSpace(4*4))
	n, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	a.answer = strings.TrimSpace(string(buf[:n]))
	msgs, _ := unix.ParseSocketControlMessage(oob[:oobn])
	var fds []int
	for i := range msgs {
		if got, err := unix.ParseUnixRights(&msgs[i]); err == nil {
			fds = append(fds, got...)
		}
	}
	for _, f := range fds {
		t.Cleanup(func() { unix.Close(f) })
	}
	if strings.HasPrefix(a.answer, "OK ") && len(fds) == 2 {
		a.mfd = fds[1]
	}
	return a
}

// TestRingClientCannotCrashServer: a ring client does to its shared memory
// everything it can (truncate, shrink, grow and unlink a ring file, where
// there is one; truncate, shrink and grow its memfd; punch holes in it;
// overwrite all of it with garbage) while other clients PING. The server
// must go on serving them, and reclaim the attacker. Before the rings
// lived in sealed memfds, truncating a ring file killed the server's loop
// with SIGBUS. Logs the other clients' PING p50/p99 during the attack.
func TestRingClientCannotCrashServer(t *testing.T) {
	srv, dir := startRingServer(t, "resp")
	tgt := "ring://" + dir + "?proto=resp&wait=yield"
	ps := startPingers(t, tgt, 3)
	// A client of the library, whose rings a version 1 server kept in a
	// file in dir that any client could open.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	victim, err := client.Dial(ctx, tgt)
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close()
	a := handshake(t, dir)
	t.Logf("attacker's handshake answer: %q (memfd: %t)", a.answer, a.mfd >= 0)
	time.Sleep(time.Second)
	t.Logf("other clients' PINGs before the attack: %v", ps.take())

	var attacks []string
	// A version 1 server kept each client's rings in a file here; the
	// newest is the victim's (the attacker, of version 2, was refused).
	files, _ := filepath.Glob(filepath.Join(dir, "c-*.ring"))
	sort.Slice(files, func(i, j int) bool { return ringID(files[i]) < ringID(files[j]) })
	if len(files) > 1 {
		files = files[len(files)-1:]
	}
	for _, f := range files {
		attacks = append(attacks, fmt.Sprintf("truncate(%s, 0): %v", filepath.Base(f), os.Truncate(f, 0)))
		attacks = append(attacks, fmt.Sprintf("truncate(%s, 4096): %v", filepath.Base(f), os.Truncate(f, 4096)))
		attacks = append(attacks, fmt.Sprintf("unlink(%s): %v", filepath.Base(f), os.Remove(f)))
	}
	if a.mfd >= 0 {
		var st unix.Stat_t
		if err := unix.Fstat(a.mfd, &st); err != nil {
			t.Fatal(err)
		}
		for _, size := range []int64{0, 4096, st.Size / 2, st.Size * 2} {
			err := unix.Ftruncate(a.mfd, size)
			attacks = append(attacks, fmt.Sprintf("ftruncate(memfd, %d): %v", size, err))
			if !errors.Is(err, unix.EPERM) {
				t.Errorf("a client resized its ring memfd to %d bytes: %v", size, err)
			}
		}
		attacks = append(attacks, fmt.Sprintf("fallocate(punch hole): %v",
			unix.Fallocate(a.mfd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 0, st.Size)))
		mem, err := unix.Mmap(a.mfd, 0, int(st.Size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		if err != nil {
			t.Fatal(err)
		}
		// The record size, as the server wrote it in the file's header
		// (offset 20, docs/transports.md) before the garbage below.
		record := int(binary.LittleEndian.Uint32(mem[20:]))
		// Garbage everywhere, again and again: header words, tags,
		// lengths, positions, the more bit.
		rng := rand.New(rand.NewPCG(1, 2))
		for range 20 {
			for i := 0; i+8 <= len(mem); i += 8 {
				binary.LittleEndian.PutUint64(mem[i:], rng.Uint64())
			}
			time.Sleep(5 * time.Millisecond)
		}
		attacks = append(attacks, "overwrote the whole mapping with random bytes 20 times")
		// Then records the server takes for the next ones (the tags it
		// expects, with the default geometry: request ring at 4096, 64
		// records of the size read above: 16 KiB as the server lays it
		// out), of random length, more bit and content.
		const reqRing, records = 4096, 64
		for i := range records {
			off := reqRing + 256 + i*record
			for j := off + 8; j < off+record; j++ {
				mem[j] = byte(rng.Uint32())
			}
			binary.LittleEndian.PutUint64(mem[off:], uint64(i+1)|rng.Uint64()<<32)
		}
		attacks = append(attacks, "wrote 64 records of random length, more bit and content under the tags the server expects")
		unix.Munmap(mem)
	}
	if len(attacks) == 0 {
		t.Fatalf("nothing to attack: no ring file in %s and no memfd in the answer %q", dir, a.answer)
	}
	for _, s := range attacks {
		t.Log(s)
	}
	time.Sleep(300 * time.Millisecond) // the server polls the attacked rings
	if srv.Exited() {
		t.Fatalf("the server died under the attack:\n%s", srv.Log())
	}
	// Everyone else goes on: the victim's own rings were not touched when
	// they live in a memfd; with files they were, so it may have lost them.
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := victim.Ping(ctx); err != nil && len(files) == 0 {
		t.Errorf("the victim's PING after another client's attack: %v", err)
	}
	errs := ps.halt()
	t.Logf("other clients' PINGs during the attack: %v, %d failed", ps.take(), errs)
	if errs != 0 || ps.rounds.Load() == 0 {
		t.Fatalf("other clients failed %d times (first: %v) in %d PINGs", errs, ps.first.Load(), ps.rounds.Load())
	}
	// The attacker hangs up, if the server has not dropped it already for
	// its garbage; either way the server lets go of its rings and keeps
	// serving the others (three pingers and the victim).
	unix.Close(a.sock)
	start := time.Now()
	testkit.Eventually(t, 30*time.Second, "the attacker reclaimed", func() (bool, string) { return ringMaps(t, srv) == 4, "" })
	t.Logf("attacker's rings released %v after it hung up", time.Since(start).Round(time.Millisecond))
	c, err := client.Dial(ctx, tgt)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Set(ctx, "after", []byte("the attack"), client.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(ctx, "after"); err != nil || !bytes.Equal(v, []byte("the attack")) {
		t.Fatalf("GET after the attack: %q %v", v, err)
	}
}

// ringID is the client id in a version 1 ring file's name, c-<epoch>-<id>.ring.
func ringID(path string) int {
	name := strings.TrimSuffix(filepath.Base(path), ".ring")
	id, _ := strconv.Atoi(name[strings.LastIndexByte(name, '-')+1:])
	return id
}

// ringMaps counts the ring memfds process p maps.
func ringMaps(t *testing.T, p *testproc.Proc) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", p.PID))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "/memfd:goblin-ring ")
}

// TestRingCrashLeavesNoMemory: a server SIGKILLed with clients connected
// leaves its handshake socket and lock file, but no ring memory: once its
// clients let go of their mappings (they see the server gone within about
// a millisecond of waiting), every byte is back. A version 1 server left a
// 2 MiB file per client in its directory until the next start. Logs the
// bytes left behind.
func TestRingCrashLeavesNoMemory(t *testing.T) {
	srv, dir := startRingServer(t, "sbe")
	tgt := "ring://" + dir + "?proto=sbe&wait=yield"
	var cs []*client.Client
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range 4 {
		c, err := client.Dial(ctx, tgt)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Set(ctx, "k", []byte("v"), client.SetOptions{}); err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	if n := ringMaps(t, srv); n != 4 {
		t.Logf("the server maps %d rings (version 1 servers mapped files)", n)
	}
	if err := srv.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	srv.Wait(10 * time.Second)
	start := time.Now()
	for _, c := range cs {
		if err := c.Ping(ctx); err == nil {
			t.Fatal("PING answered by a dead server")
		}
	}
	t.Logf("every client saw the server gone %v after the kill", time.Since(start).Round(time.Microsecond))
	// Each client let go of its rings when it saw the server gone: no
	// mapping of ring memory is left, so none of it is held.
	if maps, err := os.ReadFile("/proc/self/maps"); err != nil || strings.Contains(string(maps), "/memfd:goblin-ring ") {
		t.Errorf("ring memory still mapped after the clients saw the server gone (%v)", err)
	}
	var left int64
	var names []string
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			continue
		}
		names = append(names, e.Name())
		if e.Type().IsRegular() {
			left += fi.Size()
		}
	}
	t.Logf("left in %s after the crash: %v, %d bytes in regular files", dir, names, left)
	for _, n := range names {
		if n != "lock" && n != "ctl.sock" {
			t.Errorf("a crashed server left %s behind", n)
		}
	}
	if left > 4096 {
		t.Errorf("a crashed server left %d bytes of files", left)
	}
}
