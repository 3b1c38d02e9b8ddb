package interop

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/aeron/driver"
	"github.com/goblin-kv/goblin/internal/testkit"
)

// placement is where BenchmarkGoDriverThroughput puts threads when
// GOBLIN_TPUT_PIN=1, the same for every driver: the Java peer's publisher
// and subscriber (the two spinning threads) share pair, one vCPU, and every
// other thread — the driver's, whichever driver it is, and the peer's own
// JIT, GC and Aeron client conductor — runs on rest, the other vCPUs. Why
// this placement and not one spinner per vCPU: see the benchmark's doc.
type placement struct {
	pair, rest unix.CPUSet
	all        unix.CPUSet // the CPUs it was made from, to restore
}

// newPlacement splits allowed (the CPUs this process may use): its lowest
// CPU for the pair, the others for the rest. It needs two CPUs at least.
func newPlacement(allowed unix.CPUSet) (placement, error) {
	pl := placement{all: allowed}
	first := -1
	for cpu := range 8 * 1024 { // CPU_SETSIZE
		if !allowed.IsSet(cpu) {
			continue
		}
		if first < 0 {
			first = cpu
			pl.pair.Set(cpu)
		} else {
			pl.rest.Set(cpu)
		}
	}
	if pl.rest.Count() == 0 {
		return placement{}, fmt.Errorf("thread placement needs 2 CPUs at least, this process may use %d", allowed.Count())
	}
	return pl, nil
}

// currentPlacement is newPlacement of the CPUs this process may run on.
func currentPlacement() (placement, error) {
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		return placement{}, fmt.Errorf("sched_getaffinity: %w", err)
	}
	return newPlacement(allowed)
}

// placeAside binds every thread of process pid (a media driver, the
// benchmark itself) to rest.
func (pl placement) placeAside(pid int) error { return pinProcess(pid, pl.rest) }

// placeSelf binds every thread of this process aside (its own threads,
// reading the peer's output, and the programs it starts later inherit
// that) until tb ends, then back to all of the CPUs it had: the
// benchmarks that run after it in the same test binary, and the peers
// they start, must not be confined to rest.
func (pl placement) placeSelf(tb testing.TB) error {
	if err := pl.placeAside(os.Getpid()); err != nil {
		return err
	}
	tb.Cleanup(func() {
		if err := pinProcess(os.Getpid(), pl.all); err != nil {
			tb.Errorf("restoring this process's CPUs: %v", err)
		}
	})
	return nil
}

// placePeer binds the Java Throughput process pid to rest, then its
// publisher and subscriber threads to pair.
func (pl placement) placePeer(pid, publisher, subscriber int) error {
	if err := pinProcess(pid, pl.rest); err != nil {
		return err
	}
	if err := pinThread(publisher, pl.pair); err != nil {
		return err
	}
	return pinThread(subscriber, pl.pair)
}

// String names the CPUs, for the benchmark's log.
func (pl placement) String() string {
	return fmt.Sprintf("publisher and subscriber on CPU %s, drivers and every other thread on CPUs %s", cpuList(pl.pair), cpuList(pl.rest))
}

func cpuList(set unix.CPUSet) string {
	s := ""
	for cpu := range 8 * 1024 {
		if set.IsSet(cpu) {
			if s != "" {
				s += ","
			}
			s += strconv.Itoa(cpu)
		}
	}
	return s
}

// pinThread binds one thread (a Linux thread id) to set.
func pinThread(tid int, set unix.CPUSet) error {
	if err := unix.SchedSetaffinity(tid, &set); err != nil {
		return fmt.Errorf("sched_setaffinity(thread %d): %w", tid, err)
	}
	return nil
}

// pinProcess binds every thread pid has now to set; threads it starts
// later inherit the binding from the thread that starts them. A thread
// that exits meanwhile is skipped.
func pinProcess(pid int, set unix.CPUSet) error {
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return fmt.Errorf("threads of process %d: %w", pid, err)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := pinThread(tid, set); err != nil && !errors.Is(err, unix.ESRCH) {
			return err
		}
	}
	return nil
}

func TestThreadIDs(t *testing.T) {
	pub, sub, err := threadIDs("THREADS publisher=4711 subscriber=4690")
	if err != nil || pub != 4711 || sub != 4690 {
		t.Fatalf("threadIDs = %d, %d, %v; want 4711, 4690, nil", pub, sub, err)
	}
	for _, bad := range []string{
		"READY",
		"THREADS publisher=4711",
		"THREADS subscriber=4690",
		"THREADS publisher=x subscriber=4690",
		"THREADS publisher=0 subscriber=4690",
		"THREADS publisher=4690 subscriber=4690",
		"RESULT publisher=4711 subscriber=4690",
	} {
		if pub, sub, err := threadIDs(bad); err == nil {
			t.Errorf("threadIDs(%q) = %d, %d, nil; want an error", bad, pub, sub)
		}
	}
}

func TestNewPlacement(t *testing.T) {
	set := func(cpus ...int) (s unix.CPUSet) {
		for _, c := range cpus {
			s.Set(c)
		}
		return s
	}
	for _, tc := range []struct {
		allowed    unix.CPUSet
		pair, rest string
	}{
		{set(0, 1), "0", "1"},
		{set(2, 5, 7), "2", "5,7"},
		{set(1, 3), "1", "3"},
	} {
		pl, err := newPlacement(tc.allowed)
		if err != nil {
			t.Fatal(err)
		}
		if got, got2 := cpuList(pl.pair), cpuList(pl.rest); got != tc.pair || got2 != tc.rest {
			t.Errorf("newPlacement(%s): pair %s, rest %s; want %s, %s", cpuList(tc.allowed), got, got2, tc.pair, tc.rest)
		}
	}
	if _, err := newPlacement(set(3)); err == nil {
		t.Error("newPlacement of one CPU: no error")
	}
}

// TestPlacementPins binds two child processes (a driver and a peer) and
// two threads of this process (standing in for the peer's publisher and
// subscriber) and reads their CPU masks back from the kernel.
func TestPlacementPins(t *testing.T) {
	pl, err := currentPlacement()
	if err != nil {
		testkit.Missing(t, "%v", err)
	}
	start := func() *exec.Cmd {
		c := exec.Command("sleep", "60")
		if err := c.Start(); err != nil {
			testkit.Missing(t, "sleep: %v", err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		return c
	}
	driver, peer := start(), start()

	// Two locked threads that end with their goroutines, so the binding
	// does not outlive the test.
	tids := make(chan int)
	release := make(chan struct{})
	defer close(release)
	for range 2 {
		go func() {
			runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
			tids <- unix.Gettid()
			<-release
		}()
	}
	pub, sub := <-tids, <-tids

	if err := pl.placeAside(driver.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if err := pl.placePeer(peer.Process.Pid, pub, sub); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what string
		tid  int
		want unix.CPUSet
	}{
		{"driver process", driver.Process.Pid, pl.rest},
		{"peer process", peer.Process.Pid, pl.rest},
		{"publisher thread", pub, pl.pair},
		{"subscriber thread", sub, pl.pair},
	} {
		var got unix.CPUSet
		if err := unix.SchedGetaffinity(c.tid, &got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s bound to CPUs %s, want %s", c.what, cpuList(got), cpuList(c.want))
		}
	}
	if pl.pair == pl.rest {
		t.Errorf("the pair and the rest share CPUs %s", cpuList(pl.pair))
	}
}

// TestPlaceSelfRestores: the benchmark process is bound aside only while
// the placed benchmark runs; afterwards its threads may use every CPU they
// could before.
func TestPlaceSelfRestores(t *testing.T) {
	pl, err := currentPlacement()
	if err != nil {
		testkit.Missing(t, "%v", err)
	}
	var during unix.CPUSet
	t.Run("placed", func(t *testing.T) {
		if err := pl.placeSelf(t); err != nil {
			t.Fatal(err)
		}
		if err := unix.SchedGetaffinity(0, &during); err != nil {
			t.Fatal(err)
		}
	})
	if during != pl.rest {
		t.Errorf("while placed, this thread was bound to CPUs %s, want %s", cpuList(during), cpuList(pl.rest))
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			continue
		}
		var got unix.CPUSet
		if err := unix.SchedGetaffinity(tid, &got); err != nil {
			continue // exited meanwhile
		}
		if got != pl.all {
			t.Errorf("after the placed benchmark, thread %d is bound to CPUs %s, want %s", tid, cpuList(got), cpuList(pl.all))
		}
	}
}

// TestPlacedThroughputPeer runs the Java Throughput peer with threads=true
// on a Go driver the way GOBLIN_TPUT_PIN=1 does: the THREADS/stdin
// handshake, the binding of its publisher and subscriber to one CPU, and
// the RESULT's cpus= (which that binding caps at one CPU). About 3 s.
func TestPlacedThroughputPeer(t *testing.T) {
	j := needJava(t)
	pl, err := currentPlacement()
	if err != nil {
		testkit.Missing(t, "%v", err)
	}
	d := startGoDriver(t, driver.Options{})
	run := javaThroughputPlaced(t, j, d.Dir(), 32, 200*time.Millisecond, 500*time.Millisecond, &pl)
	if run.rate <= 0 {
		t.Errorf("rate %g msgs/s, want > 0", run.rate)
	}
	// Two spinning threads bound to one CPU get at most that CPU (5 %
	// for the clocks' granularity); unbound they could get two.
	if run.cpus <= 0 || run.cpus > 1.05 {
		t.Errorf("the publisher and subscriber got %.3f CPUs, want (0, 1] with both bound to CPU %s", run.cpus, cpuList(pl.pair))
	}
}

func TestUndisturbedRounds(t *testing.T) {
	// Three drivers, four rounds; round 1's second driver and round 3's
	// first lost their CPU to something else.
	cpus := [][]float64{
		{0.99, 1.00, 0.98, 0.60},
		{0.97, 0.80, 0.99, 1.00},
		{1.00, 0.99, 0.96, 0.99},
	}
	if got := undisturbedRounds(cpus, 1); !slices.Equal(got, []int{0, 2}) {
		t.Errorf("undisturbedRounds(want 1 CPU) = %v, want [0 2]", got)
	}
	if got := undisturbedRounds(cpus, 2); len(got) != 0 {
		t.Errorf("undisturbedRounds(want 2 CPUs) = %v, want none", got)
	}
	if got := pick([]float64{5, 6, 7, 8}, []int{0, 2}); !slices.Equal(got, []float64{5, 7}) {
		t.Errorf("pick = %v, want [5 7]", got)
	}
}
