package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/latency"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// The persistence benchmarks (docs/persistence.md, "Results") run
// goblin-server and redis-server 7.0 one after the other in the same run,
// on the same data: BENCH_KEYS keys (default 1,000,000) of 16 bytes with
// BENCH_VALUE-byte values (default 16), saved into BENCH_DIR (default the
// test's temporary directory, on disk; /dev/shm for tmpfs).

func benchEnv(b *testing.B) (keys, value int, dir string) {
	keys, value = 1_000_000, 16
	if v := os.Getenv("BENCH_KEYS"); v != "" {
		keys, _ = strconv.Atoi(v)
	}
	if v := os.Getenv("BENCH_VALUE"); v != "" {
		value, _ = strconv.Atoi(v)
	}
	if keys <= 0 || value < 16 {
		b.Fatalf("BENCH_KEYS=%q BENCH_VALUE=%q: want a positive count and values of 16 bytes or more", os.Getenv("BENCH_KEYS"), os.Getenv("BENCH_VALUE"))
	}
	return keys, value, os.Getenv("BENCH_DIR")
}

// benchDir is a fresh directory under BENCH_DIR, or a temporary one.
func benchDir(b *testing.B, base string) string {
	if base == "" {
		return b.TempDir()
	}
	d, err := os.MkdirTemp(base, "goblin-bench")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(d) })
	return d
}

type benchPeer struct {
	name  string
	start func(b *testing.B, dir string, extra ...string) (sock string, pid int)
}

var benchPeers = []benchPeer{
	{"goblin", func(b *testing.B, dir string, extra ...string) (string, int) {
		// BENCH_GOBLIN_FLAGS adds flags to goblin-server's command line,
		// e.g. "--cpu 0" to pin its loop.
		extra = append(extra, strings.Fields(os.Getenv("BENCH_GOBLIN_FLAGS"))...)
		s := startServerTB(b, append([]string{"--dir", dir}, extra...)...)
		return s.sock, s.p.PID
	}},
	{"redis", func(b *testing.B, dir string, _ ...string) (string, int) { return startRedisIn(b, dir) }},
}

// BenchmarkPingDuringBgsave measures the stall a depth-one PING client
// sees while BGSAVEs run (one after another until 3 s of saving were
// measured), against the same client on the idle server for 3 s,
// for goblin-server (forkless: the loop walks the keyspace in slices and a
// goroutine writes) and redis-server 7.0 (fork) in the same run:
//
//	go test -run '^$' -bench PingDuringBgsave -benchtime 1x ./cmd/goblin-server/
//	BENCH_KEYS=10000000 go test -run '^$' -bench PingDuringBgsave -benchtime 1x -timeout 60m ./cmd/goblin-server/
//
// It logs both phases' percentiles, the save's length and throughput, the
// servers' memory (PSS of the server and its children) before and at the
// peak of the save, and goblin's own measurement of its loop during the
// save (INFO persistence goblin_bgsave_*: the longest cycle in wall and
// thread CPU time, GC cycles and pauses, allocations, page faults), which
// the machine's load does not blur as it blurs the client's view.
//
// First it measures the machine itself (blockingFloor): a blocking round
// trip between two threads over pipes, no server, the floor under any
// blocking client's stalls. BENCH_BUSY=N keeps N threads of the benchmark's process
// spinning at normal priority throughout (a machine whose CPUs something
// else keeps busy: where a SCHED_IDLE writer needs its rescuer).
func BenchmarkPingDuringBgsave(b *testing.B) {
	keys, value, base := benchEnv(b)
	floor, over := blockingFloor(b, 3*time.Second)
	fmt.Printf("%s: this machine, before the servers start, a blocking round trip between two threads over pipes (no server): %v; %d over 1 ms (%.1f/s)\n",
		b.Name(), floor.Summary(), over, float64(over)/3)
	if n, _ := strconv.Atoi(os.Getenv("BENCH_BUSY")); n > 0 {
		b.Cleanup(spinThreads(n))
	}
	for _, peer := range benchPeers {
		b.Run(peer.name, func(b *testing.B) {
			dir := benchDir(b, base)
			sock, pid := peer.start(b, dir)
			fillKeys(b, sock, keys, value)
			variants := []saveVariant{{}}
			if peer.name == "goblin" {
				variants = saveVariants(b)
			}
			for range b.N {
				// The variants' saves alternate, one after the other, until
				// each has 3 s of saving measured (one 10 M-key save may
				// last longer): the machine's load changes, and alternating
				// spreads it over them alike. The first save follows the
				// idle phase.
				rs := make([]stallResult, len(variants))
				probes := make([][]string, len(variants))
				var idle *latency.Recorder
				var idleCPUs cpuTally
				for n := 0; ; n++ {
					i := n % len(variants)
					if i == 0 && n > 0 && allAtLeast(rs, 3*time.Second) {
						break
					}
					if v := variants[i]; v.writer != "" {
						configSet(b, sock, "bgsave-writer-priority", v.writer)
						configSet(b, sock, "bgsave-loop-rest", v.rest)
					}
					idleFor := time.Duration(0)
					if n == 0 {
						idleFor = 3 * time.Second
					}
					r := pingStall(b, sock, pid, nil, idleFor, rss)
					if n == 0 {
						idle, idleCPUs = r.idle, r.idleCPUs
					}
					if rs[i].save == nil {
						rs[i] = r
					} else {
						rs[i].save.Merge(r.save)
						rs[i].memPeak = max(rs[i].memPeak, r.memPeak)
						rs[i].samplerMax = max(rs[i].samplerMax, r.samplerMax)
						rs[i].saveCPUs.merge(r.saveCPUs)
						rs[i].total += r.dur
					}
					probes[i] = append(probes[i], r.probe)
				}
				report(b, "idle", idle)
				size := fileSize(b, dir)
				b.Logf("%s, %d keys of 16 B + %d B: idle %v", peer.name, keys, value, idle.Summary())
				for i, v := range variants {
					r := rs[i]
					name, metric := peer.name, "save"
					if v.writer != "" {
						name, metric = peer.name+" (writer "+v.writer+", loop rest "+v.rest+")", "save-"+v.writer+"-"+v.rest
					}
					report(b, metric, r.save)
					b.ReportMetric(float64(r.save.Count()), "pings-during-"+metric)
					b.ReportMetric(float64(r.dur.Milliseconds()), metric+"-ms")
					// Every variant's lines go to the standard output too: a
					// benchmark's log keeps only its first ten lines.
					logf := func(format string, args ...any) {
						b.Logf(format, args...)
						fmt.Printf("%s: %s\n", b.Name(), fmt.Sprintf(format, args...))
					}
					logf("%s: during %d BGSAVEs (the first took %v) %v; p99.9 during/idle %.2f, max during/idle %.2f; stalls over 1 ms %.1f/s idle, %.1f/s during the saves", name,
						len(probes[i]), r.dur.Round(time.Millisecond), r.save.Summary(),
						float64(r.save.Summary().P999)/float64(idle.Summary().P999), float64(r.save.Summary().Max)/float64(idle.Summary().Max),
						float64(idleCPUs.slowTotal())/3, float64(r.saveCPUs.slowTotal())/r.total.Seconds())
					logf("%s: file %.1f MB in %s: %.0f MB/s (the first save, as INFO saw it end, 20 ms resolution; %v for all %d); memory (RSS of the server process) %.1f MB before, %.1f MB peak during the save (%+.1f %%); the longest sample (memory and INFO, every 20 ms in both phases) took %v",
						name, float64(size)/1e6, dir, float64(size)/1e6/r.dur.Seconds(), r.total.Round(time.Millisecond), len(probes[i]),
						float64(r.memBefore)/1e6, float64(r.memPeak)/1e6, 100*(float64(r.memPeak)/float64(r.memBefore)-1), r.samplerMax.Round(time.Microsecond))
					// The loop's own figures go to the standard output: a
					// benchmark's log keeps only its first ten lines.
					fmt.Printf("%s: %s: the client's CPU after each PING: idle %v; during the saves %v\n", b.Name(), name, idleCPUs, r.saveCPUs)
					for j, p := range probes[i] {
						if p != "" {
							fmt.Printf("%s: %s: loop during BGSAVE %d: %s\n", b.Name(), name, j+1, p)
						}
					}
				}
			}
		})
	}
}

func allAtLeast(rs []stallResult, d time.Duration) bool {
	for _, r := range rs {
		if r.total < d {
			return false
		}
	}
	return true
}

// saveVariant is one setting of goblin's saves: CONFIG
// bgsave-writer-priority and bgsave-loop-rest.
type saveVariant struct{ writer, rest string }

// saveVariants are the settings BenchmarkPingDuringBgsave alternates
// goblin's saves between: every pair of BENCH_WRITER (a comma-separated
// list of bgsave-writer-priority values) and
// BENCH_REST (of bgsave-loop-rest values, default "requests,always,no").
// BENCH_WRITER's default, "idle,normal", puts the default first.
func saveVariants(b *testing.B) []saveVariant {
	list := func(env, def string) []string {
		v := os.Getenv(env)
		if v == "" {
			v = def
		}
		return strings.Split(v, ",")
	}
	var vs []saveVariant
	for _, r := range list("BENCH_REST", "requests,always,no") {
		for _, w := range list("BENCH_WRITER", "idle,normal") {
			vs = append(vs, saveVariant{writer: w, rest: r})
		}
	}
	return vs
}

func configSet(b *testing.B, sock, name, value string) {
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: 1})
	defer c.Close()
	if err := c.ConfigSet(context.Background(), name, value).Err(); err != nil {
		b.Fatalf("CONFIG SET %s %s: %v", name, value, err)
	}
}

// BenchmarkMemoryDuringBgsave measures memory while a BGSAVE runs under a
// write load that overwrites every key (in a stride order, so the writes
// run ahead of and behind the save's walk; BENCH_WRITERS connections of
// pipelined MSETs, default 2), over and over until the save ends:
// goblin-server (entry-level copy-on-write) beside redis-server 7.0 (fork:
// the kernel copies every page the parent writes). It counts the distinct
// keys written during the save (the goal's condition is every key) from
// the batches sent after BGSAVE answered and answered while INFO still
// reported the save running.
//
//	go test -run '^$' -bench MemoryDuringBgsave -benchtime 1x ./cmd/goblin-server/
func BenchmarkMemoryDuringBgsave(b *testing.B) {
	keys, value, base := benchEnv(b)
	for _, peer := range benchPeers {
		b.Run(peer.name, func(b *testing.B) {
			dir := benchDir(b, base)
			sock, pid := peer.start(b, dir)
			fillKeys(b, sock, keys, value)
			for range b.N {
				stop := make(chan struct{})
				wrote := make(chan *writeLog, 1)
				load := func() { wrote <- overwriteAll(b, sock, keys, value, stop) }
				r := pingStall(b, sock, pid, load, 2*time.Second, pss)
				close(stop)
				writes, touched := (<-wrote).touched(r.began, r.lastRunning)
				b.ReportMetric(float64(r.memBefore)/1e6, "mem-before-MB")
				b.ReportMetric(float64(r.memPeak)/1e6, "mem-peak-MB")
				b.ReportMetric(100*(float64(r.memPeak)/float64(r.memBefore)-1), "mem-growth-%")
				b.ReportMetric(100*float64(touched)/float64(keys), "keys-written-during-save-%")
				b.Logf("%s, %d keys of 16 B + %d B, %d overwrites during the %v save, of %d distinct keys (%.1f %% of the keys; counted from the batches sent after BGSAVE answered and answered before INFO last said it ran): memory (PSS, server and children) %.1f MB before, %.1f MB peak (%+.1f %%)",
					peer.name, keys, value, writes, r.dur.Round(time.Millisecond), touched, 100*float64(touched)/float64(keys),
					float64(r.memBefore)/1e6, float64(r.memPeak)/1e6, 100*(float64(r.memPeak)/float64(r.memBefore)-1))
				if touched < int64(keys) {
					b.Logf("%s: the write load missed %d keys during the save: more writers (BENCH_WRITERS) may cover them", peer.name, int64(keys)-touched)
				}
				b.Logf("%s: PING under the write load, no save %v", peer.name, r.idle.Summary())
				b.Logf("%s: PING under the write load during the save %v", peer.name, r.save.Summary())
				if p := r.probe; p != "" {
					b.Logf("%s: loop during BGSAVE: %s", peer.name, p)
				}
			}
		})
	}
}

// BenchmarkLoadAtStart writes one snapshot with goblin-server's SAVE, then
// starts redis-server 7.0 and goblin-server on copies of that file,
// BENCH_ROUNDS times each (default 2) alternately, and reports the time
// from the process's start to its first answered PING, the CPU time it had
// used by then (user and system apart in the log), the CPU time once it
// idles (work it does after the load included), and the load time each
// logs. BENCH_GET_SECONDS=S adds two windows of S seconds of random GETs
// by a depth-one client, one right after the first PONG and one once the
// process idles, and reports their latencies.
//
//	go test -run '^$' -bench LoadAtStart -benchtime 1x ./cmd/goblin-server/
func BenchmarkLoadAtStart(b *testing.B) {
	keys, value, base := benchEnv(b)
	src := benchDir(b, base)
	sock, _ := benchPeers[0].start(b, src, "--databases", "16")
	fillKeys(b, sock, keys, value)
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: 1, ReadTimeout: -1}) // SAVE of 10 M keys takes a while
	if err := c.Save(context.Background()).Err(); err != nil {
		b.Fatal(err)
	}
	c.Close()
	file := filepath.Join(src, "dump.rdb")
	size := fileSize(b, src)
	var getFor time.Duration // BENCH_GET_SECONDS: the GET windows' length (none by default)
	if v, err := strconv.ParseFloat(os.Getenv("BENCH_GET_SECONDS"), 64); err == nil && v > 0 {
		getFor = time.Duration(v * float64(time.Second))
	}
	for range b.N {
		rounds := 2
		if v, err := strconv.Atoi(os.Getenv("BENCH_ROUNDS")); err == nil && v > 0 {
			rounds = v
		}
		for round := range rounds {
			for _, peer := range []string{"redis", "goblin"} {
				dir := benchDir(b, base)
				copyFile(b, file, filepath.Join(dir, "dump.rdb"))
				ready, user, sys, settled, logged, gets := startAndTimeLoad(b, peer, dir, keys, getFor)
				os.RemoveAll(dir) // the copy: a large file in BENCH_DIR (tmpfs) is memory
				b.ReportMetric(ready.Seconds(), peer+"-ready-s")
				b.ReportMetric((user + sys).Seconds(), peer+"-cpu-s")
				b.ReportMetric(settled.Seconds(), peer+"-settled-cpu-s")
				b.Logf("round %d, %s: %d keys (%.1f MB file): first PONG %v after start, %v of CPU (every thread: %v user + %v system) by then, %v once idle (work after the load included); its log says loaded in %s%s",
					round+1, peer, keys, float64(size)/1e6, ready.Round(time.Millisecond), (user + sys).Round(time.Millisecond),
					user.Round(time.Millisecond), sys.Round(time.Millisecond), settled.Round(time.Millisecond), logged, gets)
			}
		}
	}
}

// getWindow GETs random keys of the benchmark's (key:%012d below keys)
// over one connection, one at a time, for d, recording each round trip.
// The keys are drawn from a sequence seeded by the window's name: the
// same for both peers, another for each window (the settled window does
// not replay the keys the window after the load brought into cache).
func getWindow(b *testing.B, sock, window string, keys int, d time.Duration, r *latency.Recorder) {
	conn, err := net.Dial("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReaderSize(conn, 64<<10)
	h := fnv.New64a()
	h.Write([]byte(window))
	rng := rand.New(rand.NewPCG(uint64(keys), h.Sum64()))
	var req []byte
	for end := time.Now().Add(d); time.Now().Before(end); {
		req = fmt.Appendf(req[:0], "*2\r\n$3\r\nGET\r\n$16\r\nkey:%012d\r\n", rng.IntN(keys))
		start := latency.Now()
		if _, err := conn.Write(req); err != nil {
			b.Fatal(err)
		}
		head, err := br.ReadSlice('\n')
		n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(string(head), "$")))
		if err != nil || head[0] != '$' || n <= 0 {
			b.Fatalf("GET answered %q, %v", head, err)
		}
		if _, err := br.Discard(n + 2); err != nil {
			b.Fatal(err)
		}
		r.Record(latency.Now() - start)
	}
}

// getsLine reports a GET window's latencies and returns them as text.
func getsLine(b *testing.B, peer, window string, r *latency.Recorder) string {
	s := r.Summary()
	report(b, peer+"-"+strings.ReplaceAll(window, " ", "-")+"-get", r)
	return fmt.Sprintf("GETs %s: %d, p50 %v p99 %v p99.9 %v max %v", window, r.Count(),
		time.Duration(s.P50), time.Duration(s.P99), time.Duration(s.P999), time.Duration(s.Max))
}

func copyFile(b *testing.B, from, to string) {
	in, err := os.Open(from)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		b.Fatal(err)
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
}

// startAndTimeLoad starts peer on dir/dump.rdb and returns the time to its
// first PONG, the CPU time the process had used by then (on a loaded
// machine the fairer figure: it leaves out the time other processes had
// the CPUs) and the load time its log states; it stops the server.
//
// With getFor > 0 a depth-one client GETs random keys for getFor right
// after the first PONG and again for getFor once the process idles, and
// their latencies are logged and reported (peer-after-load-get-*,
// peer-settled-get-*): whether serving suffers from what follows the load.
func startAndTimeLoad(b *testing.B, peer, dir string, keys int, getFor time.Duration) (ready, user, sys, settled time.Duration, logged, gets string) {
	sock := filepath.Join(dir, "s.sock")
	var p *testproc.Proc
	start := time.Now()
	switch peer {
	case "redis":
		bin := testkit.Need(b, "redis-server", "the peer whose load time the benchmark shows beside goblin's")
		p = testproc.Start(b, bin, "--port", "0", "--unixsocket", sock, "--dir", dir, "--save", "", "--appendonly", "no")
	default:
		bin := testproc.Build(b, "./cmd/goblin-server")
		p = testproc.Start(b, bin, "--listen", "uds://"+sock, "--dir", dir)
	}
	defer p.Stop(30 * time.Second)
	testkit.Eventually(b, 10*time.Minute, peer+" to answer PING with PONG after loading "+dir, func() (bool, string) {
		conn, err := net.Dial("unix", sock)
		if err != nil {
			return false, err.Error()
		}
		defer conn.Close()
		conn.Write([]byte("*1\r\n$4\r\nPING\r\n"))
		line, err := bufio.NewReader(conn).ReadString('\n')
		if line == "+PONG\r\n" {
			ready = time.Since(start)
			user, sys = processUserSys(p.PID)
			return true, ""
		}
		time.Sleep(5 * time.Millisecond)
		return false, fmt.Sprintf("%q %v", line, err)
	})
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: 1})
	defer c.Close()
	if n, err := c.DBSize(context.Background()).Result(); err != nil || n != int64(keys) {
		b.Fatalf("%s holds %d keys after loading (%v), want %d", peer, n, err, keys)
	}
	if getFor > 0 {
		gets = "; "
		// Random GETs right after the load, while goblin collapses the
		// loaded memory into huge pages (their serving's CPU then counts
		// in settled too).
		r := latency.New()
		getWindow(b, sock, "after load", keys, getFor, r)
		gets += getsLine(b, peer, "after load", r)
	}
	// The CPU time once the process idles (less than 20 ms in half a
	// second, at most 30 s on): what it did after the load counts too
	// (goblin's collapse of the loaded memory into huge pages).
	settled = processCPU(p.PID)
	for range 60 {
		time.Sleep(500 * time.Millisecond)
		now := processCPU(p.PID)
		if now-settled < 20*time.Millisecond {
			settled = now
			break
		}
		settled = now
	}
	if getFor > 0 {
		r := latency.New()
		getWindow(b, sock, "settled", keys, getFor, r)
		gets += "; " + getsLine(b, peer, "settled", r)
	}
	logged = "?"
	for _, re := range []string{`DB loaded from disk: ([0-9.]+ seconds)`, `msg="DB loaded from disk".* duration=(\S+)`} {
		if m := regexp.MustCompile(re).FindStringSubmatch(p.Log()); m != nil {
			logged = m[1]
		}
	}
	return ready, user, sys, settled, logged, gets
}

// processCPU returns the user and system CPU time process pid has used,
// all its threads (/proc/PID/stat fields 14 and 15, in clock ticks of
// 10 ms), or 0 if it cannot be read.
func processCPU(pid int) time.Duration {
	user, sys := processUserSys(pid)
	return user + sys
}

// processUserSys is processCPU in its two parts: user and system time.
func processUserSys(pid int) (user, sys time.Duration) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// count fields after its closing one.
	i := bytes.LastIndexByte(stat, ')')
	f := strings.Fields(string(stat[i+1:])) // f[0] is field 3
	if len(f) < 13 {
		return 0, 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime) * 10 * time.Millisecond, time.Duration(stime) * 10 * time.Millisecond
}

func fileSize(b *testing.B, dir string) int64 {
	fi, err := os.Stat(filepath.Join(dir, "dump.rdb"))
	if err != nil {
		b.Fatal(err)
	}
	return fi.Size()
}

func report(b *testing.B, prefix string, r *latency.Recorder) {
	s := r.Summary()
	b.ReportMetric(float64(s.P50), prefix+"-p50-ns")
	b.ReportMetric(float64(s.P99), prefix+"-p99-ns")
	b.ReportMetric(float64(s.P999), prefix+"-p99.9-ns")
	b.ReportMetric(float64(s.Max), prefix+"-max-ns")
}

func startRedisB(b *testing.B) string {
	sock, _ := startRedisIn(b, b.TempDir())
	return sock
}

// startRedisIn starts redis-server with no save policy in dir and returns
// its socket and pid.
func startRedisIn(b *testing.B, dir string) (string, int) {
	sock := dir + "/redis.sock"
	bin := testkit.Need(b, "redis-server", "the peer whose fork stall the benchmark shows beside goblin's")
	p := testproc.Start(b, bin, "--port", "0", "--unixsocket", sock, "--dir", dir, "--save", "", "--appendonly", "no")
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock})
	defer c.Close()
	deadline := time.Now().Add(startTimeout)
	for c.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			b.Fatal("redis-server never answered PING")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return sock, p.PID
}

// benchValue returns key i's value of exactly n bytes for a round of
// writes, in v's array.
func benchValue(v []byte, n, i, round int) []byte {
	v = strconv.AppendInt(v[:0], int64(i), 10)
	v = append(strconv.AppendInt(append(v, ':'), int64(round), 10), ':')
	v = v[:min(len(v), n, 16)] // at most 8+1+5+2 digits and colons
	for len(v) < n {
		v = append(v, 'x')
	}
	return v
}

// fillKeys writes n keys of 16 bytes with values of value bytes, pipelined
// SETs in batches of 1,000.
func fillKeys(b *testing.B, sock string, n, value int) {
	if got := writeKeys(b, sock, n, value, 1, 0, nil); got != int64(n) {
		b.Fatalf("wrote %d keys of %d", got, n)
	}
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: 1})
	defer c.Close()
	if got, _ := c.DBSize(context.Background()).Result(); got != int64(n) {
		b.Fatalf("DBSIZE %d after filling %d keys", got, n)
	}
	if got, _ := c.StrLen(context.Background(), "key:000000000000").Result(); got != int64(value) {
		b.Fatalf("STRLEN %d after filling with %d-byte values", got, value)
	}
}

// overwriteAll overwrites every key in stride order, again and again until
// stop is closed, over BENCH_WRITERS connections (default 2), each
// writing its share of the order with pipelined MSETs of 50 keys, 4,000
// keys a batch. It returns the batches written, each with when it was sent
// and when its replies were read, so the keys written during a save can be
// counted (writeLog.touched).
func overwriteAll(b *testing.B, sock string, n, value int, stop <-chan struct{}) *writeLog {
	stride := 7919 // a prime: key i*stride mod n visits every key when n is not its multiple
	if n%stride == 0 {
		stride = 7907
	}
	writers := 2
	if v, err := strconv.Atoi(os.Getenv("BENCH_WRITERS")); err == nil && v > 0 {
		writers = v
	}
	logs := make([][]writeBatch, writers)
	done := make(chan struct{}, writers)
	for w := range writers {
		go func() {
			defer func() { done <- struct{}{} }()
			lo, hi := w*n/writers, (w+1)*n/writers
			for round := 1; ; round++ {
				if !msetKeys(b, sock, n, value, stride, round, lo, hi, stop, &logs[w]) {
					return
				}
			}
		}()
	}
	for range writers {
		<-done
	}
	return &writeLog{n: n, stride: stride, batches: slices.Concat(logs...)}
}

// writeBatch is one pipelined batch of overwriteAll: keys i*stride mod n
// for i in [from, from+count), sent at sent, every reply read by acked.
type writeBatch struct {
	from, count int
	sent, acked time.Time
}

// writeLog is what overwriteAll wrote.
type writeLog struct {
	n, stride int
	batches   []writeBatch
}

// touched returns the writes and the distinct keys written between begin
// and end: of the batches sent after begin whose replies were read before
// end, so every one of their writes ran inside that span.
func (l *writeLog) touched(begin, end time.Time) (writes, keys int64) {
	seen := make([]uint64, (l.n+63)/64)
	for _, bt := range l.batches {
		if bt.sent.Before(begin) || bt.acked.After(end) {
			continue
		}
		writes += int64(bt.count)
		for i := bt.from; i < bt.from+bt.count; i++ {
			k := int(int64(i) * int64(l.stride) % int64(l.n))
			if seen[k/64]&(1<<(k%64)) == 0 {
				seen[k/64] |= 1 << (k % 64)
				keys++
			}
		}
	}
	return writes, keys
}

// msetKeys overwrites keys i*stride mod n for i in [lo, hi) with MSETs of
// 50 keys, 80 of them (4,000 keys) pipelined at a time, logging each
// batch; it reports false once stop is closed or a write failed.
func msetKeys(b *testing.B, sock string, n, value, stride, round, lo, hi int, stop <-chan struct{}, log *[]writeBatch) bool {
	conn, err := net.Dial("unix", sock)
	if err != nil {
		b.Error(err)
		return false
	}
	defer conn.Close()
	r := bufio.NewReaderSize(conn, 64<<10)
	var buf []byte
	v := make([]byte, 0, value)
	const perCmd, perBatch = 50, 4000
	for i := lo; i < hi; {
		select {
		case <-stop:
			return false
		default:
		}
		buf = buf[:0]
		from, cmds := i, 0
		for ; i < hi && i-from < perBatch; cmds++ {
			m := min(perCmd, hi-i, perBatch-(i-from))
			buf = append(strconv.AppendInt(append(buf, '*'), int64(1+2*m), 10), "\r\n$4\r\nMSET\r\n"...)
			for range m {
				k := int(int64(i) * int64(stride) % int64(n))
				v = benchValue(v, value, k, round)
				buf = appendBenchKey(append(buf, "$16\r\n"...), k)
				buf = strconv.AppendInt(append(buf, "\r\n$"...), int64(len(v)), 10)
				buf = append(append(append(buf, "\r\n"...), v...), "\r\n"...)
				i++
			}
		}
		sent := time.Now()
		if _, err := conn.Write(buf); err != nil {
			b.Error(err)
			return false
		}
		for range cmds {
			line, err := r.ReadSlice('\n')
			if err != nil || !bytes.Equal(line, []byte("+OK\r\n")) {
				b.Errorf("MSET answered %q, %v", line, err)
				return false
			}
		}
		*log = append(*log, writeBatch{from: from, count: i - from, sent: sent, acked: time.Now()})
	}
	return true
}

// appendBenchKey appends key k's name, "key:" and k in 12 digits.
func appendBenchKey(buf []byte, k int) []byte {
	buf = append(buf, "key:000000000000"...)
	for j := len(buf) - 1; k > 0; j, k = j-1, k/10 {
		buf[j] = byte('0' + k%10)
	}
	return buf
}

// writeKeys SETs keys i*stride mod n for i in [0, n), pipelined 1,000 at a
// time, until stop is closed; it returns the SETs answered.
func writeKeys(b *testing.B, sock string, n, value, stride, round int, stop <-chan struct{}) int64 {
	conn, err := net.Dial("unix", sock)
	if err != nil {
		b.Error(err)
		return 0
	}
	defer conn.Close()
	r := bufio.NewReaderSize(conn, 64<<10)
	var buf []byte
	v := make([]byte, 0, value)
	var done int64
	for i := 0; i < n; {
		select {
		case <-stop:
			return done
		default:
		}
		buf = buf[:0]
		batch := 0
		for ; batch < 1000 && i < n; batch, i = batch+1, i+1 {
			k := int(int64(i) * int64(stride) % int64(n))
			v = benchValue(v, value, k, round)
			buf = fmt.Appendf(buf, "*3\r\n$3\r\nSET\r\n$16\r\nkey:%012d\r\n$%d\r\n", k, len(v))
			buf = append(append(buf, v...), "\r\n"...)
		}
		if _, err := conn.Write(buf); err != nil {
			b.Error(err)
			return done
		}
		for range batch {
			line, err := r.ReadSlice('\n')
			if err != nil || !bytes.Equal(line, []byte("+OK\r\n")) {
				b.Errorf("SET answered %q, %v", line, err)
				return done
			}
			done++
		}
	}
	return done
}

// pss returns the proportional set size of pid and its descendants in
// bytes: a page shared by a forked child and its parent counts half in
// each, so the sum is the memory they hold together.
func pss(pid int) int64 {
	var total int64
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "Pss:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			total += kb * 1024
		}
	}
	kids, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	for _, k := range strings.Fields(string(kids)) {
		if c, err := strconv.Atoi(k); err == nil {
			total += pss(c)
		}
	}
	return total
}

// pingClient returns a depth-one PING over a fresh connection to sock,
// recording each round trip, and its closing. With BENCH_CLIENT_CPU=N the
// client is the calling goroutine's own thread pinned to CPU N (until the
// closing) doing blocking system calls on the socket (never Go's
// netpoller, whose wake-ups may land on any CPU): with the server's loop
// pinned elsewhere (BENCH_GOBLIN_FLAGS="--cpu 0") the client then never
// waits behind the loop for a CPU, and the stall measured is the server's,
// as a client on another host would see it. Call both on one goroutine.
func pingClient(b *testing.B, sock string) (ping func(*latency.Recorder, *cpuTally), closeClient func()) {
	req := []byte("*1\r\n$4\r\nPING\r\n")
	buf := make([]byte, 7)
	cpu := os.Getenv("BENCH_CLIENT_CPU")
	if cpu == "" {
		conn, err := net.Dial("unix", sock)
		if err != nil {
			b.Fatal(err)
		}
		return func(r *latency.Recorder, t *cpuTally) {
			start := latency.Now()
			if _, err := conn.Write(req); err != nil {
				b.Fatal(err)
			}
			if _, err := io.ReadFull(conn, buf); err != nil || string(buf) != "+PONG\r\n" {
				b.Fatalf("PING: %q, %v", buf, err)
			}
			d := latency.Now() - start
			r.Record(d)
			t.add(d)
		}, func() { conn.Close() }
	}
	n, err := strconv.Atoi(cpu)
	if err != nil {
		b.Fatalf("BENCH_CLIENT_CPU=%q: want a CPU number", cpu)
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0) // blocking
	if err != nil {
		b.Fatal(err)
	}
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: sock}); err != nil {
		b.Fatal(err)
	}
	// A thread that fails the benchmark (Goexit) while locked ends with it,
	// its affinity too.
	runtime.LockOSThread()
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		b.Fatal(err)
	}
	set.Set(n)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		b.Fatalf("pinning the client to CPU %d: %v", n, err)
	}
	return func(r *latency.Recorder, t *cpuTally) {
			start := latency.Now()
			_, err := unix.Write(fd, req)
			for got := 0; err == nil && got < len(buf); {
				var k int
				if k, err = unix.Read(fd, buf[got:]); err == nil && k == 0 {
					err = io.ErrUnexpectedEOF
				}
				got += k
			}
			if err != nil || string(buf) != "+PONG\r\n" {
				b.Fatalf("PING: %q, %v", buf, err)
			}
			d := latency.Now() - start
			r.Record(d)
			t.add(d)
		}, func() {
			unix.Close(fd)
			unix.SchedSetaffinity(0, &old)
			runtime.UnlockOSThread()
		}
}

// cpuTally counts the PINGs by the CPU the client ran on when its reply
// had come (getcpu), all of them and those over 1 ms: with the loop
// pinned (BENCH_GOBLIN_FLAGS="--cpu 0"), whether the slow ones are those
// whose client waited on the loop's CPU.
type cpuTally struct {
	all, slow [4]int64 // CPUs 0-3
}

func (t *cpuTally) add(d int64) {
	var cpu uint32
	unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0) // a system call of ~0.1 µs, after the clock read
	if cpu < uint32(len(t.all)) {
		t.all[cpu]++
		if d > int64(time.Millisecond) {
			t.slow[cpu]++
		}
	}
}

// slowTotal is the PINGs over 1 ms on every CPU.
func (t cpuTally) slowTotal() (n int64) {
	for _, s := range t.slow {
		n += s
	}
	return n
}

// blockingFloor runs the shortest blocking round trip there is for span:
// two threads of the benchmark's process, each blocked in read(2) on a pipe
// until the other writes a byte to it, no server anywhere. What it sees
// beyond a few microseconds is the machine's (on a virtual machine, a
// halted vCPU the host takes milliseconds to run again, or a timer tick
// late): the floor under the longest stall of any client that blocks for
// its reply, whatever the server does.
func blockingFloor(b *testing.B, span time.Duration) (r *latency.Recorder, over1ms int) {
	var there, back [2]int
	if err := unix.Pipe2(there[:], unix.O_CLOEXEC); err != nil {
		b.Fatal(err)
	}
	if err := unix.Pipe2(back[:], unix.O_CLOEXEC); err != nil {
		b.Fatal(err)
	}
	defer func() {
		for _, fd := range []int{there[0], there[1], back[0], back[1]} {
			unix.Close(fd)
		}
	}()
	echoed := make(chan struct{})
	go func() {
		defer close(echoed)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var c [1]byte
		for {
			if n, err := unix.Read(there[0], c[:]); n != 1 || err != nil || c[0] == 0 {
				return
			}
			unix.Write(back[1], c[:])
		}
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r = latency.New()
	c := [1]byte{1}
	for end := time.Now().Add(span); time.Now().Before(end); {
		start := latency.Now()
		unix.Write(there[1], c[:])
		if n, err := unix.Read(back[0], c[:]); n != 1 || err != nil {
			b.Fatalf("the pipe round trip: %d bytes, %v", n, err)
		}
		d := latency.Now() - start
		r.Record(d)
		if d > int64(time.Millisecond) {
			over1ms++
		}
	}
	c[0] = 0 // the echo thread stops
	unix.Write(there[1], c[:])
	<-echoed
	return r, over1ms
}

// spinThreads starts n goroutines spinning on threads of their own at the
// process's priority and returns the function that stops them.
func spinThreads(n int) func() {
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for !stop.Load() {
			}
		}()
	}
	return func() { stop.Store(true); wg.Wait() }
}

func (t *cpuTally) merge(o cpuTally) {
	for i := range t.all {
		t.all[i] += o.all[i]
		t.slow[i] += o.slow[i]
	}
}

func (t cpuTally) String() string {
	var b strings.Builder
	for i := range t.all {
		if t.all[i] > 0 {
			fmt.Fprintf(&b, " cpu%d=%d(%d over 1 ms)", i, t.all[i], t.slow[i])
		}
	}
	return strings.TrimSpace(b.String())
}

// rss returns the resident memory of process pid alone in bytes
// (/proc/PID/statm), a cheap read where pss walks the page tables (tens of
// milliseconds of the CPU for a 10 M-key server, which would load the
// machine the stall is measured on): for the PING benchmark, whose saves
// write nothing (a forked child's own copies, which PSS would count, come
// from writes).
func rss(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

type stallResult struct {
	idle, save         *latency.Recorder
	dur                time.Duration // the save's, as INFO saw it end
	total              time.Duration // of every save merged into this one
	memBefore, memPeak int64
	samplerMax         time.Duration // the longest memory sample (PSS) and INFO, every 20 ms during the save
	idleCPUs, saveCPUs cpuTally      // where the client ran, each phase
	probe              string        // goblin's goblin_bgsave_* INFO fields
	// began is when BGSAVE answered (the cut or the fork was made), and
	// lastRunning when the last INFO that still reported the save running
	// was sent: a write answered before it ran during the save.
	began, lastRunning time.Time
}

// pingStall starts load (if any), runs depth-one PINGs for idle (none
// when 0), then starts a BGSAVE and runs them until INFO reports the save
// done, sampling the server's memory with mem (rss or pss) and its INFO
// every 20 ms in both phases.
func pingStall(b *testing.B, sock string, pid int, load func(), idle time.Duration, mem func(pid int) int64) stallResult {
	ping, closeClient := pingClient(b, sock)
	defer closeClient()
	res := stallResult{idle: latency.New(), save: latency.New()}
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: 1})
	defer c.Close()
	ctx := context.Background()
	var last string // the last INFO persistence, for a failure message
	// sample is the watcher's work every 20 ms, in both phases alike (the
	// idle baseline bears the same measuring load as the save): the
	// server's memory and its INFO persistence. It reports whether a save
	// runs.
	sample := func() bool {
		t := time.Now()
		res.memPeak = max(res.memPeak, mem(pid))
		info, err := c.Info(ctx, "persistence").Result()
		res.samplerMax = max(res.samplerMax, time.Since(t))
		last = info
		return err == nil && !strings.Contains(info, "rdb_bgsave_in_progress:0")
	}
	if load != nil {
		go load()
		time.Sleep(100 * time.Millisecond) // the load runs in the idle phase too: the baseline the save is compared with
	}
	if idle > 0 {
		stop, stopped := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(stopped)
			for {
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
					sample()
				}
			}
		}()
		for end := time.Now().Add(idle); time.Now().Before(end); {
			ping(res.idle, &res.idleCPUs)
		}
		close(stop)
		<-stopped
	}
	res.memBefore = mem(pid)
	res.memPeak = res.memBefore
	res.samplerMax = 0
	done := make(chan struct{})
	began := time.Now()
	if err := c.BgSave(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	res.began = time.Now()
	go func() {
		defer close(done)
		deadline := time.Now().Add(30 * time.Minute)
		for time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			t := time.Now()
			if !sample() {
				return
			}
			res.lastRunning = t
		}
	}()
	for {
		select {
		case <-done:
			res.dur = time.Since(began)
			res.total = res.dur
			if !strings.Contains(last, "rdb_bgsave_in_progress:0") || !strings.Contains(last, "rdb_last_bgsave_status:ok") {
				b.Fatalf("BGSAVE did not end with status ok within 30 minutes; INFO persistence:\n%s", last)
			}
			var probe []string
			for _, line := range strings.Split(last, "\r\n") {
				if k, v, ok := strings.Cut(line, ":"); ok && strings.HasPrefix(k, "goblin_bgsave_") {
					probe = append(probe, strings.TrimPrefix(k, "goblin_bgsave_")+"="+v)
				} else if ok && k == "goblin_rdb_last_cow_keys" { // keys a write handed over before the walk
					probe = append(probe, "cow_keys="+v)
				}
			}
			res.probe = strings.Join(probe, " ")
			return res
		default:
			ping(res.save, &res.saveCPUs)
		}
	}
}
