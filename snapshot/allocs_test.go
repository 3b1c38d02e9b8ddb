package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/store"
)

// TestBackgroundSaveStepAllocatesNothing: once a background save has
// begun, its slices (walk, encoding, CRC, hand-over to the writer) and the
// copy-on-write of a key ahead of the walk allocate nothing, on the loop
// or in the writer goroutine (AllocsPerRun counts every goroutine's): the
// save gives the garbage collector no reason to run and stop the loop.
func TestBackgroundSaveStepAllocatesNothing(t *testing.T) {
	const n = 200_000
	s := newStores(t, 1)[0]
	val := []byte("value-of-thirty-two-bytes-000000")
	for i := range n {
		if _, _, _, err := s.Set(nil, fmt.Appendf(nil, "key:%012d", i), val, store.SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "dump.rdb")
	j, err := Begin([]DB{{0, s}}, Options{Path: path}, true)
	if err != nil {
		t.Fatal(err)
	}
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "key:%012d", i)
	}
	next := n - 1 // overwrite from the end: keys the walk has not reached
	allocs := testing.AllocsPerRun(300, func() {
		if _, _, _, err := s.Set(nil, keys[next], val, store.SetOptions{}); err != nil {
			t.Fatal(err)
		}
		next--
		j.StepFor(20 * time.Microsecond)
	})
	if allocs != 0 {
		t.Errorf("a background save slice with a copy-on-write allocates %.1f times, want 0", allocs)
	}
	for !j.StepFor(time.Millisecond) {
	}
	for {
		done, err := j.Finished()
		if err != nil {
			t.Fatal(err)
		}
		if done {
			break
		}
		time.Sleep(time.Millisecond)
	}
	got := loadInto(t, path, 1)[0]
	if got.Len() != n {
		t.Fatalf("the saved file holds %d keys, want %d", got.Len(), n)
	}
	if _, cow := j.Keys(); cow == 0 {
		t.Errorf("no key was written by copy-on-write: the test did not exercise it")
	}
}

// TestPipeReusesItsBuffers: the pipe's buffers are allocated when it is
// made; writing up to its backlog allocates nothing even while the writer
// is stalled, copy-on-write beyond it takes a counted overflow buffer, and
// the file holds every byte in order.
func TestPipeReusesItsBuffers(t *testing.T) {
	const backlog = 1 << 20
	var p *pipe
	chunk := make([]byte, 64<<10)
	want := make([]byte, 0, 8<<20)
	seq := byte(0)
	write := func() {
		for i := range chunk {
			chunk[i] = seq
			seq++
		}
		if _, err := p.Write(chunk); err != nil {
			t.Fatal(err)
		}
		want = append(want, chunk...)
	}
	// No writer runs yet: everything stays queued. MemStats counts every
	// goroutine's allocations, the test framework's and the race
	// detector's too: a fresh pipe gets up to five tries to show none,
	// which a pipe allocating per write (16 writes here) never does.
	var allocs []uint64
	for try := 0; ; try++ {
		p, want, seq = newPipe(backlog), want[:0], 0
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		for range backlog / len(chunk) {
			write()
		}
		runtime.ReadMemStats(&m1)
		allocs = append(allocs, m1.Mallocs-m0.Mallocs)
		if m1.Mallocs == m0.Mallocs || try == 4 {
			break
		}
		p.release()
	}
	if allocs[len(allocs)-1] != 0 || p.Overflow() != 0 {
		t.Errorf("writing %d bytes into a stalled pipe allocated %v times in five tries (%d overflow buffers), want none", backlog, allocs, p.Overflow())
	}
	for range backlog / len(chunk) {
		write()
	}
	if p.Overflow() == 0 {
		t.Errorf("2 MiB queued in a pipe of 1 MiB and two buffers: no overflow buffer counted")
	}
	if got := p.Backlog(); got != int64(len(want)) {
		t.Errorf("Backlog %d, want %d", got, len(want))
	}
	path := filepath.Join(t.TempDir(), "out")
	f, err := createTemp(path + ".tmp")
	if err != nil {
		t.Fatal(err)
	}
	p.start(f, path, WriterNormal)
	for range 64 { // the writer drains while the loop writes: buffers come back
		write()
	}
	p.Close()
	waitWriter(p)
	// The writer (or the goroutine that faulted the slab in, if it ended
	// after it) unmapped the slab once the loop had closed the pipe: the
	// unmapping's CPU time is not the loop's.
	waitUnmapped(t, p, "the writer finished a closed pipe and left its slab for the loop to unmap")
	p.release()
	if p.result != nil {
		t.Fatal(p.result)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the file holds %d bytes, not the %d written in order", len(got), len(want))
	}

	// An aborted pipe's writer unmaps the slab too; a failed writer leaves
	// it to the loop, which may still be copying into a buffer.
	p = newPipe(backlog)
	for range pipeBuf / len(chunk) { // one buffer full: queued
		write()
	}
	p.start(f, path, WriterNormal) // f is closed: the first write fails
	<-p.done
	if p.result == nil || p.unmapped.Load() {
		t.Errorf("a writer that failed (result %v) unmapped the slab the loop may still be writing into", p.result)
	}
	p.release()
	p = newPipe(backlog)
	write()
	f2, err := createTemp(path + ".tmp2")
	if err != nil {
		t.Fatal(err)
	}
	p.f, p.path = f2, path+"2"
	p.users.Add(1) // as start does, but the writer runs here, after the abort
	p.Abort()
	p.run(false)
	if !p.unmapped.Load() || p.result != errAborted {
		t.Errorf("an aborted writer ended with %v and left its slab for the loop", p.result)
	}
	p.release()
}

// TestPipeKeepsOrderWithAWriterRunning: the loop's writes in chunks of
// random sizes, first with the writer stalled (more buffers than the queue
// holds: the rest wait in order in pending, each an overflow buffer), then
// with it draining at the same time: the file holds every byte in order.
func TestPipeKeepsOrderWithAWriterRunning(t *testing.T) {
	const total, stalled = 32 << 20, 24 << 20
	p := newPipe(pipeBuf)
	path := filepath.Join(t.TempDir(), "out")
	f, err := createTemp(path + ".tmp")
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, total)
	for i := range want {
		want[i] = byte(i * 7 / 3)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for off := 0; off < total; {
		if off >= stalled && f != nil {
			if len(p.pending) == 0 {
				t.Fatalf("%d MiB written to a stalled pipe and none pending: the test misses the pending path", stalled>>20)
			}
			p.start(f, path, WriterNormal)
			f = nil
		}
		n := min(1+rng.IntN(300<<10), total-off)
		if _, err := p.Write(want[off : off+n]); err != nil {
			t.Fatal(err)
		}
		off += n
	}
	p.Close()
	waitWriter(p)
	if p.result != nil {
		t.Fatal(p.result)
	}
	p.release()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the file holds %d bytes, not the %d written in order", len(got), len(want))
	}
}

// TestRescuerTakesOver starts a rescuer beside a first writer stopped in
// two places (asleep with nothing queued, and holding a buffer before its
// write, as a SCHED_IDLE thread preempted there would be) and checks that
// the rescuer sleeps when the queue is empty (it must not spin a CPU away
// from the clients), that the file holds every byte in order, that the
// rescuer does not commit before the first writer's write returns, that
// the first writer stops, and that the slab is unmapped after both have
// left; then that an abort ends a rescued save without waiting for the
// first writer's write.
func TestRescuerTakesOver(t *testing.T) {
	for _, where := range []string{"asleep", "holding a buffer"} {
		t.Run(where, func(t *testing.T) {
			p := newPipe(pipeBuf)
			path := filepath.Join(t.TempDir(), "out")
			f, err := createTemp(path + ".tmp")
			if err != nil {
				t.Fatal(err)
			}
			want := make([]byte, 8<<20)
			for i := range want {
				want[i] = byte(i * 5 / 3)
			}
			gate, holding := make(chan struct{}), make(chan struct{})
			var firstWrites atomic.Int32
			beforeWrite = func(rescuer bool) {
				if rescuer {
					return
				}
				n := firstWrites.Add(1)
				if where == "holding a buffer" && n == 2 {
					close(holding)
					<-gate // the rescuer writes the rest meanwhile
				}
			}
			defer func() { beforeWrite = nil }()
			// idleFirst: the first writer's unmap and end go to goroutines,
			// as a SCHED_IDLE one's do.
			p.f, p.path, p.idleFirst = f, path, true
			p.users.Add(1) // as start does, but the test knows when the first writer returns
			firstDone := make(chan struct{})
			go func() { defer close(firstDone); p.run(false) }()
			off := 0
			write := func(n int) {
				if _, err := p.Write(want[off : off+n]); err != nil {
					t.Fatal(err)
				}
				off += n
			}
			switch where {
			case "asleep":
				write(3 * pipeBuf / 2) // one buffer queued and written
				for p.Backlog() > pipeBuf/2 || p.sleeping[0].Load() != 1 {
					time.Sleep(100 * time.Microsecond)
				}
			default:
				write(3 * pipeBuf)
				<-holding
			}
			if !p.rescue() {
				t.Fatal("rescue refused with the first writer still running")
			}
			if p.rescue() {
				t.Fatal("a second rescue started")
			}
			// The rescuer drains the queue (but the buffer the first writer
			// holds) and sleeps: over 100 ms the process uses little CPU.
			for deadline := time.Now().Add(10 * time.Second); p.queue.empty() == false || p.sleeping[1].Load() != 1; {
				if time.Now().After(deadline) {
					t.Fatalf("the rescuer did not go to sleep on an empty queue in 10 s (backlog %d)", p.Backlog())
				}
				time.Sleep(100 * time.Microsecond)
			}
			cpu := processCPU()
			time.Sleep(100 * time.Millisecond)
			if cpu = processCPU() - cpu; cpu > 50*time.Millisecond {
				t.Fatalf("with the rescuer waiting for buffers the process used %v of CPU in 100 ms: it spins", cpu)
			}
			for off < len(want) {
				write(min(100<<10, len(want)-off))
			}
			p.Close()
			if where == "holding a buffer" {
				// The first writer's in-flight write: the rescuer must not
				// commit before it returns.
				time.Sleep(20 * time.Millisecond)
				if done, _ := p.Result(); done {
					t.Fatal("the rescuer ended the save with the first writer's write still under way")
				}
			}
			if where == "holding a buffer" {
				close(gate)
			}
			waitWriter(p)
			if p.result != nil {
				t.Fatal(p.result)
			}
			<-firstDone // a first writer that lost the token stops
			p.release()
			waitUnmapped(t, p, "the slab is still mapped after every user left")
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("the file holds %d bytes, not the %d written in order", len(got), len(want))
			}
		})
	}
}

// TestAbortEndsARescuedSave aborts a rescued save whose first writer holds
// a buffer it has not written (as a starved SCHED_IDLE thread would): the
// rescuer ends it at once, without the first writer's write, and removes
// the temporary file.
func TestAbortEndsARescuedSave(t *testing.T) {
	p := newPipe(pipeBuf)
	path := filepath.Join(t.TempDir(), "out")
	f, err := createTemp(path + ".tmp")
	if err != nil {
		t.Fatal(err)
	}
	gate, holding := make(chan struct{}), make(chan struct{})
	beforeWrite = func(rescuer bool) {
		if !rescuer {
			close(holding)
			<-gate
		}
	}
	defer func() { beforeWrite = nil }()
	p.f, p.path, p.idleFirst = f, path, true
	p.users.Add(1)
	firstDone := make(chan struct{})
	go func() { defer close(firstDone); p.run(false) }()
	if _, err := p.Write(make([]byte, 3*pipeBuf)); err != nil {
		t.Fatal(err)
	}
	<-holding
	p.rescue()
	p.Close()
	p.Abort()
	ended := make(chan struct{})
	go func() { waitWriter(p); close(ended) }()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("an aborted rescued save did not end in 10 s: it waits for the first writer's write")
	}
	if p.result != errAborted {
		t.Fatalf("result %v, want errAborted", p.result)
	}
	if _, err := os.Stat(path + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the temporary file is left after the abort: %v", err)
	}
	close(gate)
	<-firstDone
	p.release()
	waitUnmapped(t, p, "the slab is still mapped after every user left")
}

// waitUnmapped waits up to 10 s for p's slab to be unmapped by its last
// user, failing with why otherwise.
func waitUnmapped(t *testing.T, p *pipe, why string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !p.unmapped.Load(); time.Sleep(100 * time.Microsecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (%d users left after 10 s)", why, p.users.Load())
		}
	}
}

// waitWriter waits for p's writer to finish, as Job.Finished does: the
// loop's flush queues what the queue had no room for, then closes.
func waitWriter(p *pipe) {
	for {
		p.flush()
		if done, _ := p.Result(); done {
			return
		}
		time.Sleep(100 * time.Microsecond)
	}
}
