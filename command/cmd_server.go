package command

import (
	"strconv"
	"strings"

	"github.com/goblin-kv/goblin/glob"
	"github.com/goblin-kv/goblin/reply"
	"github.com/goblin-kv/goblin/request"
	"github.com/goblin-kv/goblin/store"
)

// configGet answers CONFIG GET pattern [pattern ...] with name/value
// pairs for the parameters Redis clients and redis-benchmark ask about.
func (e *Engine) configGet(_ *Session, r *request.Request) {
	e.st.Stats(&e.stats)
	pairs := [][2]string{
		{"save", ""}, {"appendonly", "no"}, {"databases", strconv.Itoa(e.o.Databases)},
		{"maxmemory", strconv.FormatInt(e.stats.MaxMemory, 10)},
	}
	e.begin(reply.Map)
	match := func(p []byte) {
		for _, kv := range pairs {
			if glob.MatchFold(p, []byte(kv[0])) {
				e.addCopy(reply.Bulk, []byte(kv[0]))
				e.addCopy(reply.Bulk, []byte(kv[1]))
			}
		}
		if e.o.Config != nil {
			for _, kv := range e.o.Config(nil, strings.ToLower(string(p))) {
				e.addCopy(reply.Bulk, []byte(kv[0]))
				e.addCopy(reply.Bulk, []byte(kv[1]))
			}
		}
	}
	match(r.Key)
	for _, p := range r.Args {
		match(p)
	}
	e.end()
}

// info answers INFO [section ...] with the server and clients sections from
// Options.Info and memory, stats and keyspace from the store.
func (e *Engine) info(_ *Session, r *request.Request) {
	sections := r.Args
	want := func(name string) bool {
		if len(sections) == 0 {
			return true
		}
		for _, s := range sections {
			if request.EqualFold(s, name) || request.EqualFold(s, "all") || request.EqualFold(s, "default") || request.EqualFold(s, "everything") {
				return true
			}
		}
		return false
	}
	e.allStats()
	b := e.scratch[:0]
	sep := func() {
		if len(b) > 0 {
			b = append(b, "\r\n"...)
		}
	}
	line := func(k string, v int64) {
		b = append(b, k...)
		b = append(b, ':')
		b = strconv.AppendInt(b, v, 10)
		b = append(b, "\r\n"...)
	}
	if want("server") {
		sep()
		if e.o.Info != nil {
			b = e.o.Info(b, "server")
		} else {
			b = append(b, "# Server\r\nredis_version:"...)
			b = append(b, e.o.Version...)
			b = append(b, "\r\nredis_mode:standalone\r\nserver_name:goblin\r\n"...)
		}
	}
	if want("clients") && e.o.Info != nil {
		sep()
		b = e.o.Info(b, "clients")
	}
	st := &e.stats
	if want("memory") {
		sep()
		b = append(b, "# Memory\r\n"...)
		line("used_memory", st.UsedMemory)
		line("maxmemory", st.MaxMemory)
		line("goblin_arena_size", st.ArenaSize)
		line("goblin_arena_live", st.ArenaLive)
		line("goblin_arena_dead", st.ArenaDead)
		line("goblin_index_buckets", st.IndexBuckets)
	}
	if want("stats") {
		sep()
		b = append(b, "# Stats\r\n"...)
		line("total_commands_processed", int64(e.total))
		line("keyspace_hits", st.Hits)
		line("keyspace_misses", st.Misses)
		line("expired_keys", st.Expired)
		line("evicted_keys", st.Evicted)
		line("rejected_oom", st.OOMRejects)
	}
	if want("keyspace") {
		sep()
		b = append(b, "# Keyspace\r\n"...)
		var one store.Stats
		for i, db := range e.dbs {
			if db == nil || db.Len() == 0 {
				continue
			}
			db.Stats(&one)
			b = append(b, "db"...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, ":keys="...)
			b = strconv.AppendInt(b, one.Keys, 10)
			b = append(b, ",expires="...)
			b = strconv.AppendInt(b, one.KeysWithTTL, 10)
			b = append(b, ",avg_ttl="...)
			b = strconv.AppendInt(b, db.AvgTTL(1024), 10)
			b = append(b, "\r\n"...)
		}
	}
	e.scratch = b[:0]
	e.res.Kind, e.res.Value = reply.Verbatim, b
}
