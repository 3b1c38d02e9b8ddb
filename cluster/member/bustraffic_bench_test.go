package member_test

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// BenchmarkBusTraffic measures, for clusters of BUS_NODES nodes ("6,30"
// by default; half masters, a replica each, made by redis-cli --cluster
// create), the cluster bus's traffic per node per second at rest, a
// goblin cluster and a redis-server 7.0 cluster running side by side and
// sampled in the same window: bytes each node's process sent on sockets
// to or from a bus port (the kernel's tcp_info bytes_sent, read with
// ss -tinp at the start and end of BUS_WINDOW, 10 s by default) and the
// messages it counted (CLUSTER INFO cluster_stats_messages_sent), and the
// CPU time each node's process used in the window beside a standalone
// server of its kind at rest in the same window (/proc/PID/stat; the
// difference is what the bus costs a resting node). Then the loop cost of
// the bus: PING p50/p99 over 8 rounds of 5,000 sequential
// PINGs on a cluster node at rest and on a standalone server, goblin and
// redis-server, the four alternated, and the median of the rounds'
// cluster/standalone ratios. benchmarks/bustraffic/run.sh runs it.
func BenchmarkBusTraffic(b *testing.B) {
	testkit.Need(b, "ss", "reading the bus sockets' byte counters")
	sizes := []int{6, 30}
	if v := os.Getenv("BUS_NODES"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(f)
			if err != nil || n < 6 || n%2 != 0 {
				b.Fatalf("BUS_NODES=%q: want even numbers of at least 6, comma-separated", v)
			}
			sizes = append(sizes, n)
		}
	}
	window := 10 * time.Second
	if v := os.Getenv("BUS_WINDOW"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatalf("BUS_WINDOW=%q: %v", v, err)
		}
		window = d
	}
	for _, size := range sizes {
		b.Run(strconv.Itoa(size)+"nodes", func(b *testing.B) {
			for range b.N {
				busTraffic(b, size, window)
			}
		})
	}
}

func busTraffic(b *testing.B, size int, window time.Duration) {
	kinds := []string{"goblin", "redis"}
	clusters := map[string][]*haNode{}
	for _, k := range kinds {
		clusters[k] = startHANodesOf(b, k, size)
	}
	for _, k := range kinds {
		haCreate(b, clusters[k])
	}
	// Standalone servers of each kind, at rest beside the clusters: the
	// CPU they use in the window is what a node uses without the bus.
	solo := map[string]*haNode{}
	for _, k := range kinds {
		solo[k] = startSolo(b, k)
	}
	time.Sleep(5 * time.Second) // every node met every other; gossip at its resting rate
	bytes0, msgs0, cpu0 := map[string]busSockets{}, map[string][]int64{}, map[string][]time.Duration{}
	types0 := map[string]map[string]int64{}
	soloCPU0 := map[string]time.Duration{}
	for _, k := range kinds {
		msgs0[k], types0[k] = busMessages(b, clusters[k])
		bytes0[k], cpu0[k] = busBytes(b, clusters[k]), nodesCPU(clusters[k])
		soloCPU0[k] = procCPU(solo[k].proc.PID)
	}
	start := time.Now()
	time.Sleep(window)
	secs := time.Since(start).Seconds()
	fmt.Printf("%d nodes (%d masters + %d replicas), at rest, %.1f s window, per node per second:\n", size, size/2, size/2, secs)
	for _, k := range kinds {
		ms, types := busMessages(b, clusters[k])
		by, cpu := busBytes(b, clusters[k]), nodesCPU(clusters[k])
		soloCPU := procCPU(solo[k].proc.PID) - soloCPU0[k]
		sent, opened := sentSince(bytes0[k], by)
		rates, mrates, cpus := make([]float64, size), make([]float64, size), make([]float64, size)
		for i := range size {
			rates[i] = float64(sent[i]) / secs
			mrates[i] = float64(ms[i]-msgs0[k][i]) / secs
			cpus[i] = float64(cpu[i]-cpu0[k][i]) / float64(time.Millisecond) / secs
		}
		mean, lo, hi := stats(rates)
		mmean, _, _ := stats(mrates)
		cmean, _, _ := stats(cpus)
		fmt.Printf("  %-6s bus bytes sent mean %8.0f B/s (min %8.0f, max %8.0f), messages sent mean %6.1f/s (%.0f B per message); %d bus sockets opened in the window\n",
			k, mean, lo, hi, mmean, mean/mmean, opened)
		var perType []string
		for _, t := range slices.Sorted(maps.Keys(types)) {
			if d := types[t] - types0[k][t]; d > 0 {
				perType = append(perType, fmt.Sprintf("%s %.1f", t, float64(d)/float64(size)/secs))
			}
		}
		fmt.Printf("  %-6s messages sent per node per second by type: %s\n", k, strings.Join(perType, ", "))
		fmt.Printf("  %-6s CPU at rest: cluster node mean %5.1f ms/s, standalone %5.1f ms/s\n", k, cmean, float64(soloCPU)/float64(time.Millisecond)/secs)
		b.ReportMetric(mean, k+"-B/s/node")
		b.ReportMetric(mmean, k+"-msgs/s/node")
		b.ReportMetric(cmean, k+"-cpu-ms/s/node")
	}
	// The loop cost of the bus on a node at rest.
	targets := []struct{ name, addr string }{
		{"goblin standalone", solo["goblin"].addr}, {"goblin cluster node", clusters["goblin"][0].addr},
		{"redis standalone", solo["redis"].addr}, {"redis cluster node", clusters["redis"][0].addr},
	}
	p50s, p99s := make([][]time.Duration, len(targets)), make([][]time.Duration, len(targets))
	for range pingRounds {
		for i, t := range targets {
			pingLatency(b, t.addr, 500)
			p50, p99 := pingLatency(b, t.addr, 5000)
			p50s[i], p99s[i] = append(p50s[i], p50), append(p99s[i], p99)
		}
	}
	fmt.Printf("PING at rest, %d-node cluster, median of %d rounds × 5,000:\n", size, pingRounds)
	for i, t := range targets {
		fmt.Printf("  %-20s p50 %7.1f µs  p99 %7.1f µs\n", t.name, us(median(p50s[i])), us(median(p99s[i])))
	}
	// Each round's cluster/standalone ratio, then the median of those:
	// a burst of the machine's load hits both of a round's runs alike.
	ratio := func(node, solo [][]time.Duration, i, j int) (float64, []float64) {
		var r []float64
		for k := range node[i] {
			r = append(r, us(node[i][k])/us(solo[j][k]))
		}
		s := slices.Clone(r)
		slices.Sort(s)
		return s[len(s)/2], r
	}
	g99, gr := ratio(p99s, p99s, 1, 0)
	r99, rr := ratio(p99s, p99s, 3, 2)
	g50, _ := ratio(p50s, p50s, 1, 0)
	r50, _ := ratio(p50s, p50s, 3, 2)
	fmt.Printf("  cluster/standalone, median of the rounds' ratios: goblin p50 %.2f p99 %.2f, redis p50 %.2f p99 %.2f\n", g50, g99, r50, r99)
	fmt.Printf("  the rounds' p99 ratios: goblin %.2f, redis %.2f\n", gr, rr)
	b.ReportMetric(g99, "goblin-p99-node/solo")
	b.ReportMetric(r99, "redis-p99-node/solo")
}

// pingRounds is how many rounds of PINGs the loop-cost part runs, each
// target once per round, alternated.
const pingRounds = 8

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func stats(v []float64) (mean, lo, hi float64) {
	lo, hi = v[0], v[0]
	for _, x := range v {
		mean += x
		lo, hi = min(lo, x), max(hi, x)
	}
	return mean / float64(len(v)), lo, hi
}

// startSolo starts a standalone goblin-server or redis-server.
func startSolo(tb testing.TB, kind string) *haNode {
	tb.Helper()
	port := testproc.FreeTCPPorts(tb, 1)[0]
	x := &haNode{port: port, addr: "127.0.0.1:" + strconv.Itoa(port)}
	if kind == "redis" {
		x.proc = testproc.Start(tb, testkit.Need(tb, "redis-server", "the standalone peer"), "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--dir", tb.TempDir())
	} else {
		x.proc = testproc.Start(tb, testproc.Build(tb, "./cmd/goblin-server"), "--listen", "tcp://"+x.addr, "--metrics", "off", "--dir", tb.TempDir())
	}
	testproc.WaitDial(tb, "tcp", x.addr, 30*time.Second)
	return x
}

// procCPU returns the user+system CPU time process pid has used so far
// (/proc/PID/stat, in clock ticks of 10 ms; 0 if it cannot be read).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:] // the command name may hold spaces
	}
	f := strings.Fields(s)
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+k) * 10 * time.Millisecond
}

// nodesCPU returns each node's procCPU.
func nodesCPU(ns []*haNode) []time.Duration {
	v := make([]time.Duration, len(ns))
	for i, x := range ns {
		v[i] = procCPU(x.proc.PID)
	}
	return v
}

// pingLatency sends n PINGs one after the other and returns p50 and p99.
func pingLatency(tb testing.TB, addr string, n int) (p50, p99 time.Duration) {
	tb.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	lat := make([]time.Duration, n)
	for i := range n {
		t := time.Now()
		if _, err := c.Write([]byte("PING\r\n")); err != nil {
			tb.Fatal(err)
		}
		if l, err := r.ReadString('\n'); err != nil || l != "+PONG\r\n" {
			tb.Fatalf("PING to %s: %q %v", addr, l, err)
		}
		lat[i] = time.Since(t)
	}
	slices.Sort(lat)
	return lat[n/2], lat[n*99/100]
}

var (
	ssPID  = regexp.MustCompile(`pid=(\d+),`)
	ssSent = regexp.MustCompile(`bytes_sent:(\d+)`)
)

// busSockets is, per node, the bytes_sent of each of its bus sockets,
// by the socket's local and remote address.
type busSockets []map[string]int64

// busBytes reads, per node, the bytes its process has sent on each TCP
// socket whose local or remote port is one of the nodes' bus ports.
func busBytes(tb testing.TB, ns []*haNode) busSockets {
	tb.Helper()
	out, err := exec.Command("ss", "-tinpH").Output()
	if err != nil {
		tb.Fatalf("ss -tinpH: %v", err)
	}
	bus, pid := map[string]bool{}, map[int]int{}
	for i, x := range ns {
		bus[strconv.Itoa(x.busPort)] = true
		pid[x.proc.PID] = i
	}
	sent := make(busSockets, len(ns))
	for i := range sent {
		sent[i] = map[string]int64{}
	}
	lines := strings.Split(string(out), "\n")
	for i := 0; i+1 < len(lines); i++ {
		f := strings.Fields(lines[i])
		if len(f) < 6 || f[0] != "ESTAB" {
			continue
		}
		m := ssPID.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		p, _ := strconv.Atoi(m[1])
		node, ok := pid[p]
		if !ok {
			continue
		}
		_, lp, _ := net.SplitHostPort(f[3])
		_, rp, _ := net.SplitHostPort(f[4])
		if !bus[lp] && !bus[rp] {
			continue
		}
		if s := ssSent.FindStringSubmatch(lines[i+1]); s != nil {
			v, _ := strconv.ParseInt(s[1], 10, 64)
			sent[node][f[3]+" "+f[4]] = v
		}
	}
	return sent
}

// sentSince returns, per node, the bytes sent on its bus sockets between
// the two readings, and how many sockets were opened in between: a socket open at both counts its growth, a socket
// opened since counts all it sent (a link dropped and dialled again
// starts a new counter, which a difference of sums would take as bytes
// unsent). What a socket closed in between sent after the first reading
// is not seen.
func sentSince(before, after busSockets) (sent []int64, opened int) {
	sent = make([]int64, len(after))
	for i, socks := range after {
		for k, v := range socks {
			was, ok := before[i][k]
			if !ok {
				opened++
			}
			sent[i] += v - was // was is 0 for a socket opened since
		}
	}
	return sent, opened
}

// busMessages returns each node's cluster_stats_messages_sent, and the
// nodes' cluster_stats_messages_TYPE_sent summed, by type.
func busMessages(tb testing.TB, ns []*haNode) ([]int64, map[string]int64) {
	tb.Helper()
	v, byType := make([]int64, len(ns)), map[string]int64{}
	for i, x := range ns {
		info, err := x.c.ClusterInfo(context.Background()).Result()
		if err != nil {
			tb.Fatalf("%s CLUSTER INFO: %v", x.addr, err)
		}
		for _, l := range strings.Split(info, "\r\n") {
			k, n, ok := strings.Cut(l, ":")
			if !ok {
				continue
			}
			if k == "cluster_stats_messages_sent" {
				v[i], _ = strconv.ParseInt(n, 10, 64)
			} else if t, ok := strings.CutPrefix(k, "cluster_stats_messages_"); ok && strings.HasSuffix(t, "_sent") {
				c, _ := strconv.ParseInt(n, 10, 64)
				byType[strings.TrimSuffix(t, "_sent")] += c
			}
		}
	}
	return v, byType
}
