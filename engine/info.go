package engine

import (
	"github.com/goblin-kv/goblin/internal/buildinfo"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/store"
)

// INFO: the sections and fields Redis 7.0 has that tools read, with
// goblin's figures (and a few goblin_ fields of its own). Persistence and
// replication answer as a server that saves nothing and has no replicas.

// infoSections are INFO's sections in order; the first ones are the
// default set, "commandstats" only comes with all/everything or by name.
var infoSections = [...]string{"server", "clients", "memory", "persistence", "stats", "replication", "cpu",
	"modules", "errorstats", "latencystats", "cluster", "keyspace", "commandstats"}

func (e *Engine) info(s *Session, r *command.Request) {
	want := func(name string) bool {
		if len(r.Args) == 0 {
			return name != "commandstats" && name != "latencystats"
		}
		for _, a := range r.Args {
			switch {
			case command.EqualFold(a, name), command.EqualFold(a, "all"), command.EqualFold(a, "everything"):
				return true
			case command.EqualFold(a, "default") && name != "commandstats" && name != "latencystats":
				return true
			}
		}
		return false
	}
	st := e.allStats()
	e.notePeak(st.UsedMemory)
	b := e.scratch[:0]
	w := infoWriter{b: b}
	for _, sec := range infoSections {
		if !want(sec) {
			continue
		}
		if len(w.b) > 0 {
			w.b = append(w.b, "\r\n"...)
		}
		e.infoSection(&w, s, sec, st)
	}
	e.scratch = w.b[:0]
	e.res.Kind, e.res.Value = command.Verbatim, w.b
}

type infoWriter struct{ b []byte }

func (w *infoWriter) str(k, v string) {
	w.b = append(w.b, k...)
	w.b = append(w.b, ':')
	w.b = append(w.b, v...)
	w.b = append(w.b, "\r\n"...)
}

func (w *infoWriter) int(k string, v int64) {
	w.b = append(w.b, k...)
	w.b = append(w.b, ':')
	w.b = strconv.AppendInt(w.b, v, 10)
	w.b = append(w.b, "\r\n"...)
}

// human writes n bytes as Redis's *_human fields do ("1.50M").
func (w *infoWriter) human(k string, n int64) {
	units := "BKMGTPE"
	f, i := float64(n), 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	w.b = append(w.b, k...)
	w.b = append(w.b, ':')
	if i == 0 {
		w.b = strconv.AppendInt(w.b, n, 10)
		w.b = append(w.b, 'B')
	} else {
		w.b = strconv.AppendFloat(w.b, f, 'f', 2, 64)
		w.b = append(w.b, units[i])
	}
	w.b = append(w.b, "\r\n"...)
}

// Readings of the process and the wall clock, variables so that tests
// can make INFO's output repeatable.
var (
	wallClock    = time.Now
	processStats = func() (rss int64, self, thread unix.Rusage) {
		_ = unix.Getrusage(unix.RUSAGE_SELF, &self)
		_ = unix.Getrusage(unix.RUSAGE_THREAD, &thread) // the loop's own thread
		return residentBytes(), self, thread
	}
)

func (e *Engine) infoSection(w *infoWriter, s *Session, sec string, st *store.Stats) {
	now := wallClock()
	rss, self, thread := processStats()
	switch sec {
	case "server":
		w.b = append(w.b, "# Server\r\n"...)
		w.str("redis_version", e.o.Version)
		w.str("redis_git_sha1", "00000000")
		w.str("redis_git_dirty", "0")
		w.str("redis_build_id", "0")
		w.str("redis_mode", e.redisMode())
		w.str("os", osName())
		w.int("arch_bits", strconv.IntSize)
		w.str("monotonic_clock", "POSIX clock_gettime")
		w.str("multiplexing_api", "epoll")
		w.str("atomicvar_api", "c11-builtin")
		w.str("gcc_version", "0.0.0")
		w.int("process_id", int64(os.Getpid()))
		w.str("process_supervised", "no")
		w.str("run_id", e.runID)
		w.int("server_time_usec", now.UnixMicro())
		w.int("uptime_in_seconds", int64(now.Sub(e.started)/time.Second))
		w.int("uptime_in_days", int64(now.Sub(e.started)/(24*time.Hour)))
		w.int("hz", 10)
		w.int("configured_hz", 10)
		w.int("lru_clock", now.Unix()&(1<<24-1))
		exe, _ := os.Executable()
		w.str("executable", exe)
		w.str("config_file", "")
		w.int("io_threads_active", 0)
		w.str("goblin_version", goblinVersion())
		w.str("goblin_go_version", runtime.Version())
		if e.o.Info != nil {
			w.b = e.o.Info(w.b, "server")
		}
	case "clients":
		w.b = append(w.b, "# Clients\r\n"...)
		w.int("connected_clients", int64(len(e.sessions)))
		w.int("cluster_connections", 0)
		w.int("blocked_clients", e.blockedClients())
		w.int("tracking_clients", 0)
		w.int("clients_in_timeout_table", 0)
		if e.o.Info != nil {
			w.b = e.o.Info(w.b, "clients")
		}
	case "memory":
		m := e.processMemory(st, rss)
		w.b = append(w.b, "# Memory\r\n"...)
		w.int("used_memory", m.used)
		w.human("used_memory_human", m.used)
		w.int("used_memory_rss", m.rss)
		w.human("used_memory_rss_human", m.rss)
		w.int("used_memory_peak", m.peak)
		w.human("used_memory_peak_human", m.peak)
		w.str("used_memory_peak_perc", percent(m.used, m.peak))
		w.int("used_memory_overhead", m.overhead)
		w.int("used_memory_startup", m.startup)
		w.int("used_memory_dataset", m.dataset)
		w.str("used_memory_dataset_perc", percent(m.dataset, max(m.used-m.startup, m.dataset)))
		w.int("total_system_memory", systemMemory())
		w.human("total_system_memory_human", systemMemory())
		w.int("used_memory_lua", 0)
		w.int("used_memory_scripts", 0)
		w.int("maxmemory", st.MaxMemory)
		w.human("maxmemory_human", st.MaxMemory)
		w.str("maxmemory_policy", e.dbs[0].Options().Eviction.String())
		w.str("mem_fragmentation_ratio", ratio(m.rss, m.used))
		w.int("mem_fragmentation_bytes", m.rss-m.used)
		w.str("mem_allocator", "go-runtime+goblin-arena")
		w.int("lazyfree_pending_objects", 0)
		w.int("goblin_store_bytes", st.UsedMemory)
		w.human("goblin_store_bytes_human", st.UsedMemory)
		w.int("goblin_store_peak_bytes", e.peakUsed)
		w.int("goblin_store_overhead_bytes", st.IndexBuckets*8+st.SlotBytes)
		w.int("goblin_arena_size", st.ArenaSize)
		w.int("goblin_arena_mapped", st.ArenaMapped)
		w.int("goblin_arena_live", st.ArenaLive)
		w.int("goblin_arena_dead", st.ArenaDead)
		w.int("goblin_index_buckets", st.IndexBuckets)
		scanHeap, scanGlobals := gcScannable()
		w.int("goblin_gc_scan_heap_bytes", scanHeap)
		w.int("goblin_gc_scan_globals_bytes", scanGlobals)
	case "persistence":
		w.b = append(w.b, "# Persistence\r\n"...)
		e.infoPersistence(w)
		w.int("aof_enabled", 0)
		w.int("aof_rewrite_in_progress", 0)
		w.int("aof_rewrite_scheduled", 0)
		w.int("aof_last_rewrite_time_sec", -1)
		w.int("aof_current_rewrite_time_sec", -1)
		w.str("aof_last_bgrewrite_status", "ok")
		w.int("aof_rewrites", 0)
		w.int("aof_rewrites_consecutive_failures", 0)
		w.str("aof_last_write_status", "ok")
		w.int("aof_last_cow_size", 0)
		w.int("module_fork_in_progress", 0)
		w.int("module_fork_last_cow_size", 0)
		if e.loading != nil {
			e.infoLoading(w)
		}
		if p := &e.snap; p.lastErr != "" {
			w.str("goblin_rdb_last_error", strings.NewReplacer("\r", " ", "\n", " ").Replace(p.lastErr))
		}
		w.int("goblin_rdb_last_cow_keys", e.snap.lastCOW)
		held := int64(0)
		if e.savesHeld() != "" {
			held = 1
		}
		w.int("goblin_rdb_saves_held", held) // a replica's full sync loading or given up part-way (savesHeld)
		infoCollapse(w)
		e.snap.probe.last.info(w)
	case "stats":
		w.b = append(w.b, "# Stats\r\n"...)
		w.int("total_connections_received", int64(e.nextID))
		w.int("total_commands_processed", int64(e.processed()))
		w.int("instantaneous_ops_per_sec", e.opsPerSec())
		w.int("rejected_connections", 0)
		w.int("sync_full", e.repl.syncFull)
		w.int("sync_partial_ok", e.repl.syncPartialOK)
		w.int("sync_partial_err", e.repl.syncPartialErr)
		w.int("expired_keys", st.Expired)
		w.int("evicted_keys", st.Evicted)
		w.int("evicted_clients", 0)
		w.int("keyspace_hits", st.Hits)
		w.int("keyspace_misses", st.Misses)
		w.int("pubsub_channels", int64(len(e.ps.channels)))
		w.int("pubsub_patterns", int64(len(e.ps.patterns)))
		w.int("pubsubshard_channels", int64(len(e.ps.shard)))
		w.int("latest_fork_usec", 0)
		w.int("total_forks", 0)
		w.int("tracking_total_keys", 0)
		var errs uint64
		for _, c := range e.errors {
			errs += c.n
		}
		w.int("total_error_replies", int64(errs))
		w.int("rejected_oom", st.OOMRejects)
		w.int("goblin_pubsub_output_limit_disconnections", e.ps.cuts)
	case "replication":
		w.b = append(w.b, "# Replication\r\n"...)
		if !e.infoReplica(w) { // a replica's own fields (cmd_replica.go)
			e.infoReplication(w)
		}
	case "cpu":
		w.b = append(w.b, "# CPU\r\n"...)
		w.str("used_cpu_sys", seconds(self.Stime))
		w.str("used_cpu_user", seconds(self.Utime))
		w.str("used_cpu_sys_children", "0.000000")
		w.str("used_cpu_user_children", "0.000000")
		w.str("used_cpu_sys_main_thread", seconds(thread.Stime))
		w.str("used_cpu_user_main_thread", seconds(thread.Utime))
	case "modules":
		w.b = append(w.b, "# Modules\r\n"...)
	case "errorstats":
		w.b = append(w.b, "# Errorstats\r\n"...)
		for _, c := range e.errors {
			w.b = append(w.b, "errorstat_"...)
			w.b = append(w.b, c.code...)
			w.b = append(w.b, ":count="...)
			w.b = strconv.AppendUint(w.b, c.n, 10)
			w.b = append(w.b, "\r\n"...)
		}
	case "latencystats":
		e.infoLatencystats(w)
	case "cluster":
		w.b = append(w.b, "# Cluster\r\n"...)
		w.int("cluster_enabled", b2i(e.cl != nil))
	case "keyspace":
		w.b = append(w.b, "# Keyspace\r\n"...)
		var one store.Stats
		for i, db := range e.dbs {
			if db == nil || db.Len() == 0 {
				continue
			}
			db.Stats(&one)
			w.b = append(w.b, "db"...)
			w.b = strconv.AppendInt(w.b, int64(i), 10)
			w.b = append(w.b, ":keys="...)
			w.b = strconv.AppendInt(w.b, one.Keys, 10)
			w.b = append(w.b, ",expires="...)
			w.b = strconv.AppendInt(w.b, one.KeysWithTTL, 10)
			w.b = append(w.b, ",avg_ttl="...)
			w.b = strconv.AppendInt(w.b, db.AvgTTL(1024), 10)
			w.b = append(w.b, "\r\n"...)
		}
	case "commandstats":
		w.b = append(w.b, "# Commandstats\r\n"...)
		for _, op := range command.All() {
			c := &e.cmd[op]
			if c.calls == 0 && c.rejected == 0 && c.failed == 0 {
				continue
			}
			usec := c.usec()
			w.b = append(w.b, "cmdstat_"...)
			w.b = append(w.b, command.Name(op)...)
			w.b = append(w.b, ":calls="...)
			w.b = strconv.AppendUint(w.b, c.calls, 10)
			w.b = append(w.b, ",usec="...)
			w.b = strconv.AppendUint(w.b, usec, 10)
			w.b = append(w.b, ",usec_per_call="...)
			per := 0.0
			if c.calls > 0 {
				per = float64(usec) / float64(c.calls)
			}
			w.b = strconv.AppendFloat(w.b, per, 'f', 2, 64)
			w.b = append(w.b, ",rejected_calls="...)
			w.b = strconv.AppendUint(w.b, c.rejected, 10)
			w.b = append(w.b, ",failed_calls="...)
			w.b = strconv.AppendUint(w.b, c.failed, 10)
			w.b = append(w.b, "\r\n"...)
		}
	}
}

func percent(a, b int64) string {
	if b == 0 {
		return "0.00%"
	}
	return strconv.FormatFloat(100*float64(a)/float64(b), 'f', 2, 64) + "%"
}

func ratio(a, b int64) string {
	if b == 0 {
		return "0.00"
	}
	return strconv.FormatFloat(float64(a)/float64(b), 'f', 2, 64)
}

func seconds(t unix.Timeval) string {
	return strconv.FormatInt(t.Sec, 10) + "." + leftPad(strconv.FormatInt(int64(t.Usec), 10), 6)
}

func leftPad(s string, n int) string {
	for len(s) < n {
		s = "0" + s
	}
	return s
}

// residentBytes reads the process's resident set size from /proc.
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	i := 0
	for i < len(b) && b[i] != ' ' {
		i++
	}
	j := i + 1
	for j < len(b) && b[j] != ' ' {
		j++
	}
	if j > len(b) || i+1 > j {
		return 0
	}
	pages, _ := strconv.ParseInt(string(b[i+1:j]), 10, 64)
	return pages * int64(os.Getpagesize())
}

func systemMemory() int64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}

func osName() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return runtime.GOOS
	}
	c := func(b []byte) string {
		for i, x := range b {
			if x == 0 {
				return string(b[:i])
			}
		}
		return string(b)
	}
	return c(u.Sysname[:]) + " " + c(u.Release[:]) + " " + c(u.Machine[:])
}

// goblinVersion is the main module's version and short revision, as INFO
// server's goblin_version gives them.
func goblinVersion() string {
	in := buildinfo.Read()
	if r := in.ShortRevision(); r != "" {
		return in.Version + " " + r
	}
	return in.Version
}
