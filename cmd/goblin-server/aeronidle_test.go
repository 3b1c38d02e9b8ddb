package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestAeronPrimaryAtRestLeavesSysmonAlone: a primary publishing its
// replication stream over Aeron (to no replica) and otherwise at rest must
// not keep the Go runtime's monitor thread (sysmon) polling. With the store
// loop parked through Syscall6 beside its media driver's raw-syscall parks,
// sysmon retook the loop's P on every park and woke 6,500–7,400 times a
// second (the server took ~110–150 ms of CPU a second at rest, against 25–35
// since the loop parks raw; docs/idle.md, "The loop beside a media
// driver"); now ~100–150. The bound, 1,000 a second, is far from both.
//
// sysmon is the first thread the runtime starts after the main one (in
// runtime.main, before any package's init), so the lowest thread id past
// the process id's. It counts its voluntary and involuntary context
// switches over one second, after half a second for the start to settle.
func TestAeronPrimaryAtRestLeavesSysmonAlone(t *testing.T) {
	t.Parallel() // its own process and port; its count is its process's own
	p := startServer(t, "--repl-aeron-channel", fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", freeUDPPort(t, "127.0.0.1")))
	pid := p.p.PID
	time.Sleep(500 * time.Millisecond)
	sysmon := sysmonTID(t, pid)
	n0, total0 := taskSwitches(t, pid, sysmon)
	start := time.Now()
	time.Sleep(time.Second)
	n1, total1 := taskSwitches(t, pid, sysmon)
	el := time.Since(start).Seconds()
	rate, all := float64(n1-n0)/el, float64(total1-total0)/el
	t.Logf("at rest: sysmon (thread %d) switched %.0f times a second, the whole process %.0f", sysmon, rate, all)
	if rate > 1000 {
		t.Errorf("an Aeron primary at rest: the runtime's monitor thread (%d) woke %.0f times a second (the process's threads %.0f), want at most 1,000: the store loop's park no longer leaves it alone (server.RawParker, docs/idle.md)", sysmon, rate, all)
	}
}

// sysmonTID returns the lowest thread id of process pid other than the
// main thread's: the runtime's monitor, the first thread it starts.
func sysmonTID(t *testing.T, pid int) int {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		t.Fatal(err)
	}
	var tids []int
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil && tid != pid {
			tids = append(tids, tid)
		}
	}
	if len(tids) == 0 {
		t.Fatalf("process %d has one thread: no runtime monitor to watch", pid)
	}
	return slices.Min(tids)
}

// taskSwitches returns thread tid's context switches (voluntary and not)
// and the sum over all of process pid's threads, from /proc.
func taskSwitches(t *testing.T, pid, tid int) (thread, total int64) {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range ents {
		text, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, e.Name()))
		if err != nil {
			continue // the thread ended
		}
		var n int64
		for _, line := range strings.Split(string(text), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "voluntary_ctxt_switches") {
				c, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				n += c
			}
		}
		total += n
		if e.Name() == strconv.Itoa(tid) {
			thread, found = n, true
		}
	}
	if !found {
		t.Fatalf("thread %d of process %d is gone", tid, pid)
	}
	return thread, total
}
