package report

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A TimelineRound is one round trip of a -timeline file: when it started
// (CLOCK_MONOTONIC ns) and how long it took.
type TimelineRound struct {
	Start, Latency int64
}

// ReadTimeline reads a <op>.timeline.csv written with start times.
func ReadTimeline(path string) ([]TimelineRound, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) == 0 || len(rows[0]) < 3 || rows[0][2] != "start_mono_ns" {
		return nil, fmt.Errorf("%s: not a timeline with start times (round_trip,latency_ns,start_mono_ns)", path)
	}
	out := make([]TimelineRound, 0, len(rows)-1)
	for i, r := range rows[1:] {
		lat, err1 := strconv.ParseInt(r[1], 10, 64)
		start, err2 := strconv.ParseInt(r[2], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s: row %d: %v", path, i+2, r)
		}
		out = append(out, TimelineRound{Start: start, Latency: lat})
	}
	return out, nil
}

// A KernelEvent is one line of a kernel trace (tracefs text, trace_clock
// mono): when, on which CPU, in which task's context, the event's name
// and, for a context switch, the task switched to.
type KernelEvent struct {
	At    int64 // CLOCK_MONOTONIC ns (the text's microsecond resolution)
	CPU   int
	Comm  string // the task the event happened in
	Name  string // sched_switch, local_timer_entry, softirq_entry, ...
	Next  string // sched_switch: the next task's comm
	Extra string // the rest of the line (softirq_entry: "vec=3 [action=NET_RX]")
}

var (
	traceLine = regexp.MustCompile(`^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+(\d+)\.(\d+): (\w+): ?(.*)$`)
	nextComm  = regexp.MustCompile(`next_comm=(.+?) next_pid=`)
)

// ParseKernelTrace reads the text of a tracefs trace recorded with
// trace_clock mono; lines that are not events (headers, lost-event
// notes) are skipped. The events come back in time order.
func ParseKernelTrace(r io.Reader) ([]KernelEvent, error) {
	var out []KernelEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		m := traceLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		sec, _ := strconv.ParseInt(m[4], 10, 64)
		frac := m[5]
		ns, _ := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
		cpu, _ := strconv.Atoi(m[3])
		e := KernelEvent{At: sec*1e9 + ns, CPU: cpu, Comm: m[1], Name: m[6], Extra: m[7]}
		if e.Name == "sched_switch" {
			if n := nextComm.FindStringSubmatch(e.Extra); n != nil {
				e.Next = n[1]
			}
		}
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(a, b KernelEvent) int { return cmpInt64(a.At, b.At) })
	return out, sc.Err()
}

// Causes a slow round trip is put down to, in the order they are tried:
// the first that happened during the round trip, on either CPU, wins.
const (
	CauseOwnThread   = "another thread of the benchmark's processes ran"
	CauseOtherTask   = "another task ran: "
	CauseIdle        = "a CPU went idle"
	CausePageFault   = "a page fault in the benchmark's processes"
	CauseIPI         = "an inter-processor interrupt"
	CauseDevice      = "a device interrupt"
	CauseTimer       = "a timer interrupt or softirq only"
	CauseNothingSeen = "nothing traced"
)

var causeOrder = []string{CauseOwnThread, CauseOtherTask, CauseIdle, CausePageFault, CauseIPI, CauseDevice, CauseTimer}

// TailCause is how many slow round trips one cause accounts for, their
// median latency, and in how many fast round trips the same cause shows.
type TailCause struct {
	Cause         string
	Slow          int
	SlowMedian    int64
	FastWithCause int
}

// TailReport attributes a timeline's slow round trips (longer than 3× its
// median) to what a kernel trace of the same moments shows.
type TailReport struct {
	Rounds, Slow, Fast int
	P50, P99           int64
	Causes             []TailCause // most slow round trips first
}

// AttributeTails lines the timeline up with the kernel events: procs are
// the comm names of the benchmark's processes (goblin-bench,
// goblin-server), whose threads' context switches among themselves count
// as CauseOwnThread. A round trip is slow above 3× the median and fast at
// or below 1.5× it.
func AttributeTails(rounds []TimelineRound, events []KernelEvent, procs []string) TailReport {
	var rep TailReport
	if len(rounds) == 0 {
		return rep
	}
	lat := make([]int64, len(rounds))
	for i, r := range rounds {
		lat[i] = r.Latency
	}
	slices.Sort(lat)
	rep.Rounds, rep.P50, rep.P99 = len(lat), lat[len(lat)/2], lat[len(lat)*99/100]
	slowLat := map[string][]int64{}
	fast := map[string]int{}
	for _, r := range rounds {
		slow := r.Latency > 3*rep.P50
		if !slow && 2*r.Latency > 3*rep.P50 {
			continue
		}
		i, _ := slices.BinarySearchFunc(events, r.Start, func(e KernelEvent, t int64) int { return cmpInt64(e.At, t) })
		j, _ := slices.BinarySearchFunc(events, r.Start+r.Latency+1, func(e KernelEvent, t int64) int { return cmpInt64(e.At, t) })
		c := causeOf(events[i:j], procs)
		if slow {
			rep.Slow++
			slowLat[c] = append(slowLat[c], r.Latency)
		} else {
			rep.Fast++
			fast[c]++
		}
	}
	for c, l := range slowLat {
		slices.Sort(l)
		rep.Causes = append(rep.Causes, TailCause{Cause: c, Slow: len(l), SlowMedian: l[len(l)/2], FastWithCause: fast[c]})
	}
	slices.SortFunc(rep.Causes, func(a, b TailCause) int {
		if a.Slow != b.Slow {
			return b.Slow - a.Slow
		}
		return strings.Compare(a.Cause, b.Cause)
	})
	return rep
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// causeOf is the first cause of causeOrder among the events.
func causeOf(events []KernelEvent, procs []string) string {
	found := map[string]string{}
	for _, e := range events {
		ours := slices.Contains(procs, e.Comm)
		switch e.Name {
		case "sched_switch":
			switch {
			case strings.HasPrefix(e.Next, "swapper"):
				found[CauseIdle] = CauseIdle
			case slices.Contains(procs, e.Next):
				if ours {
					found[CauseOwnThread] = CauseOwnThread
				}
			default:
				if _, ok := found[CauseOtherTask]; !ok {
					found[CauseOtherTask] = CauseOtherTask + strings.TrimRight(e.Next, "0123456789/:")
				}
			}
		case "page_fault_user":
			if ours {
				found[CausePageFault] = CausePageFault
			}
		case "call_function_entry", "call_function_single_entry", "reschedule_entry":
			found[CauseIPI] = CauseIPI
		case "irq_handler_entry":
			found[CauseDevice] = CauseDevice
		case "local_timer_entry", "hrtimer_expire_entry":
			found[CauseTimer] = CauseTimer
		case "softirq_entry":
			// NET_RX is the benchmark's own datagrams arriving.
			if !strings.Contains(e.Extra, "NET_RX") {
				found[CauseTimer] = CauseTimer
			}
		}
	}
	for _, c := range causeOrder {
		if s, ok := found[c]; ok {
			return s
		}
	}
	return CauseNothingSeen
}

// WriteTailReport prints a TailReport as a table.
func WriteTailReport(w io.Writer, name string, rep TailReport) {
	if rep.Rounds == 0 || rep.P50 == 0 {
		fmt.Fprintf(w, "%s: no round trips\n", name)
		return
	}
	fmt.Fprintf(w, "%s: %d round trips, p50 %s µs, p99 %s µs (%.2f× p50); %d slower than 3× p50 (%.2f %%)\n",
		name, rep.Rounds, us(float64(rep.P50)), us(float64(rep.P99)), float64(rep.P99)/float64(rep.P50),
		rep.Slow, 100*float64(rep.Slow)/float64(rep.Rounds))
	fmt.Fprintf(w, "| what happened during a slow round trip | share of slow | median µs | share of fast (≤ 1.5× p50) with it |\n|---|---:|---:|---:|\n")
	for _, c := range rep.Causes {
		fmt.Fprintf(w, "| %s | %.1f %% | %s | %.2f %% |\n", c.Cause, 100*float64(c.Slow)/float64(rep.Slow),
			us(float64(c.SlowMedian)), 100*float64(c.FastWithCause)/float64(max(rep.Fast, 1)))
	}
}
