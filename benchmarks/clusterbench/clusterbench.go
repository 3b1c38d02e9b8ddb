// Package clusterbench measures what sharding buys on one machine: the
// throughput and batch latency of N local goblin-server nodes forming a
// cluster, against one node, driven by goblin's cluster client with
// pipelined batches from several goroutines (goblin-bench cluster -nodes N).
//
// Each run starts its nodes as separate processes on loopback TCP with a
// generated cluster configuration (slots split evenly), loads the keys,
// then runs a 50/50 SET/GET mix over keys spread across every slot for a
// fixed time. The one-node run is a one-node cluster, so both go through
// the same client code: the difference is the nodes.
package clusterbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/goblin-kv/goblin/client"
	"github.com/goblin-kv/goblin/cluster"
)

// Options configure a run. Server is required; zero values of the rest
// take the defaults in brackets.
type Options struct {
	Server    string        // the goblin-server binary
	Nodes     int           // nodes of the cluster run [3]
	Clients   int           // client goroutines [4]
	Pipeline  int           // commands per batch [64]
	Duration  time.Duration // measured time per run [5s]
	Keys      int           // distinct keys [100,000]
	ValueSize int           // bytes per value [16]
	Idle      string        // goblin-server --idle [backoff]
	Log       io.Writer     // progress lines (nil: none)
}

func (o *Options) defaults() {
	if o.Nodes <= 0 {
		o.Nodes = 3
	}
	if o.Clients <= 0 {
		o.Clients = 4
	}
	if o.Pipeline <= 0 {
		o.Pipeline = 64
	}
	if o.Duration <= 0 {
		o.Duration = 5 * time.Second
	}
	if o.Keys <= 0 {
		o.Keys = 100_000
	}
	if o.ValueSize <= 0 {
		o.ValueSize = 16
	}
	if o.Idle == "" {
		o.Idle = "backoff"
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
}

// Result is one run's figures.
type Result struct {
	Nodes     int
	Ops       int64         // commands completed
	Elapsed   time.Duration // measured time
	BatchP50  time.Duration // one pipelined batch, sent to replies in
	BatchP99  time.Duration
	PerSecond float64
	// ServerCPU and ClientCPU are the CPU time the nodes together and the
	// client process used during the measured time: on a small machine
	// their sum against Elapsed × cores says whether CPU is the bound.
	ServerCPU, ClientCPU time.Duration
}

// cpuOf returns the user+system CPU time of process pid so far (Linux,
// /proc/PID/stat; clock ticks of 10ms).
func cpuOf(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	f := strings.Fields(s)
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+k) * 10 * time.Millisecond
}

func serversCPU(procs []*exec.Cmd) time.Duration {
	var d time.Duration
	for _, p := range procs {
		d += cpuOf(p.Process.Pid)
	}
	return d
}

// Run measures one node, then Options.Nodes nodes.
func Run(ctx context.Context, o Options) ([]Result, error) {
	o.defaults()
	if o.Server == "" {
		return nil, errors.New("clusterbench: no goblin-server binary")
	}
	var out []Result
	for _, n := range []int{1, o.Nodes} {
		r, err := runOnce(ctx, o, n)
		if err != nil {
			return out, err
		}
		out = append(out, r)
		if o.Nodes == 1 {
			break
		}
	}
	return out, nil
}

// node ids: n repeated digits.
func nodeID(i int) string { return strings.Repeat(strconv.Itoa(i%10), 40) }

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func runOnce(ctx context.Context, o Options, nodes int) (Result, error) {
	dir, err := os.MkdirTemp("", "goblin-clusterbench-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(dir)
	ports, err := freePorts(nodes)
	if err != nil {
		return Result{}, err
	}
	var b strings.Builder
	b.WriteString("epoch 1\n")
	per := cluster.Slots / nodes
	for i := range nodes {
		first, last := i*per, (i+1)*per-1
		if i == nodes-1 {
			last = cluster.Slots - 1
		}
		fmt.Fprintf(&b, "node %s tcp://127.0.0.1:%d slots %d-%d\n", nodeID(i+1), ports[i], first, last)
	}
	conf := filepath.Join(dir, "cluster.conf")
	if err := os.WriteFile(conf, []byte(b.String()), 0o600); err != nil {
		return Result{}, err
	}
	var procs []*exec.Cmd
	defer func() {
		for _, p := range procs {
			p.Process.Signal(os.Interrupt)
			p.Wait()
		}
	}()
	for i := range nodes {
		cmd := exec.Command(o.Server, "--metrics", "off", "--idle", o.Idle, "--listen", "tcp://127.0.0.1:"+strconv.Itoa(ports[i]),
			"--cluster-config", conf, "--cluster-node", nodeID(i+1), "--dir", dir) // a snapshot in the default state directory is not the benchmark's
		cmd.Stderr = io.Discard
		if err := cmd.Start(); err != nil {
			return Result{}, err
		}
		procs = append(procs, cmd)
	}
	for i := range nodes {
		if err := waitDial("127.0.0.1:"+strconv.Itoa(ports[i]), 30*time.Second); err != nil {
			return Result{}, err
		}
	}
	cc, err := client.DialCluster(ctx, "tcp://127.0.0.1:"+strconv.Itoa(ports[0]))
	if err != nil {
		return Result{}, err
	}
	defer cc.Close()
	fmt.Fprintf(o.Log, "clusterbench: %d node(s) up; loading %d keys\n", nodes, o.Keys)
	keys := make([]string, o.Keys)
	val := strings.Repeat("v", o.ValueSize)
	for i := range keys {
		keys[i] = "bench:" + strconv.Itoa(i)
	}
	for i := 0; i < len(keys); i += 1000 {
		p := cc.Pipeline()
		for _, k := range keys[i:min(i+1000, len(keys))] {
			p.Do("SET", k, val)
		}
		if _, err := p.Exec(ctx); err != nil {
			return Result{}, err
		}
	}
	fmt.Fprintf(o.Log, "clusterbench: %d node(s): %d clients x %d-command batches for %v\n", nodes, o.Clients, o.Pipeline, o.Duration)
	var (
		mu      sync.Mutex
		lat     []time.Duration
		total   int64
		firstEr error
	)
	srv0, cli0 := serversCPU(procs), cpuOf(os.Getpid())
	deadline := time.Now().Add(o.Duration)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range o.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			var mine []time.Duration
			var n int64
			for time.Now().Before(deadline) {
				p := cc.Pipeline()
				for range o.Pipeline {
					k := keys[rng.IntN(len(keys))]
					if rng.IntN(2) == 0 {
						p.Do("SET", k, val)
					} else {
						p.Do("GET", k)
					}
				}
				t0 := time.Now()
				vs, err := p.Exec(ctx)
				mine = append(mine, time.Since(t0))
				if err == nil {
					for _, v := range vs {
						if v.Kind == client.KindError {
							err = v.Err
							break
						}
					}
				}
				if err != nil {
					mu.Lock()
					firstEr = cmp(firstEr, err)
					mu.Unlock()
					return
				}
				n += int64(len(vs))
			}
			mu.Lock()
			lat = append(lat, mine...)
			total += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	srv1, cli1 := serversCPU(procs), cpuOf(os.Getpid())
	if firstEr != nil {
		return Result{}, firstEr
	}
	slices.Sort(lat)
	r := Result{Nodes: nodes, Ops: total, Elapsed: elapsed, PerSecond: float64(total) / elapsed.Seconds(),
		ServerCPU: srv1 - srv0, ClientCPU: cli1 - cli0}
	if len(lat) > 0 {
		r.BatchP50, r.BatchP99 = lat[len(lat)/2], lat[len(lat)*99/100]
	}
	return r, nil
}

func cmp(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

func waitDial(addr string, timeout time.Duration) error {
	end := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(end) {
			return fmt.Errorf("clusterbench: %s did not answer: %w", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Print writes the results as a table, with each run's throughput
// relative to the first.
func Print(w io.Writer, o Options, rs []Result) {
	o.defaults()
	fmt.Fprintf(w, "| nodes | commands/s | vs 1 node | batch p50 | batch p99 | commands | server CPU | client CPU |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rs {
		fmt.Fprintf(w, "| %d | %.0f | %.2fx | %v | %v | %d | %.2f cores | %.2f cores |\n", r.Nodes, r.PerSecond, r.PerSecond/rs[0].PerSecond,
			r.BatchP50.Round(time.Microsecond), r.BatchP99.Round(time.Microsecond), r.Ops,
			r.ServerCPU.Seconds()/r.Elapsed.Seconds(), r.ClientCPU.Seconds()/r.Elapsed.Seconds())
	}
	fmt.Fprintf(w, "\n%d client goroutines, batches of %d (SET/GET 50/50, %d keys over every slot, %d-byte values), %v per run, server --idle %s\n",
		o.Clients, o.Pipeline, o.Keys, o.ValueSize, o.Duration, o.Idle)
}
