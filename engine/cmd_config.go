package engine

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/internal/glob"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/redisconf"
	"github.com/goblin-kv/goblin/store"
)

// CONFIG GET and SET over the engine's parameters and the server's
// (Options.Params). Names are Redis's; CONFIG GET matches them with
// Redis's glob, ignoring case.

var errImmutable = errors.New("can't set immutable config")

// params returns every parameter, the engine's first, built once.
func (e *Engine) params() []Param {
	if e.paramList != nil {
		return e.paramList
	}
	fixed := func(v string) func() string { return func() string { return v } }
	e.paramList = append([]Param{
		{Name: "maxmemory", Get: func() string { return strconv.FormatInt(e.dbs[0].MaxMemory(), 10) },
			Set: func(v string) error {
				n, ok := ParseMemory(v)
				if !ok || n > 1<<62 {
					return errors.New("argument must be a memory value")
				}
				return e.dbs[0].SetMaxMemory(int64(n))
			}},
		{Name: "maxmemory-policy", Get: func() string { return e.dbs[0].Options().Eviction.String() },
			Set: func(v string) error {
				p, err := store.ParseEvictionPolicy(strings.ToLower(v))
				if err == nil {
					if err := e.dbs[0].SetEviction(p); err != nil {
						return err
					}
					e.lfu = p.LFU()
					e.rehook()
					return nil
				}
				return errors.New("argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction")
			}},
		{Name: "maxmemory-samples", Get: fixed("5")},
		{Name: "maxmemory-eviction-tenacity", Get: fixed("10")},
		{Name: "requirepass", Get: func() string { return e.o.RequirePass },
			Set: func(v string) error {
				e.setRequirePass(v)
				return nil
			}},
		{Name: "databases", Get: func() string { return strconv.Itoa(e.o.Databases) }},
		e.saveParam(),
		{Name: "appendonly", Get: fixed("no"), Set: func(v string) error {
			switch strings.ToLower(v) {
			case "no":
				return nil
			case "yes":
				return errors.New("goblin does not persist data: appendonly must be no")
			}
			return errors.New("argument must be 'yes' or 'no'")
		}},
		{Name: "proto-max-bulk-len", Get: func() string { return strconv.Itoa(e.o.Limits.MaxBulkLen) }},
		{Name: "lfu-log-factor", Get: func() string { f, _ := e.dbs[0].LFUParams(); return strconv.Itoa(f) },
			Set: func(v string) error {
				n, err := parseNonNegInt(v)
				if err != nil {
					return err
				}
				_, d := e.dbs[0].LFUParams()
				return e.dbs[0].SetLFUParams(n, d)
			}},
		{Name: "aclfile", Get: func() string { return e.o.ACLFile }},
		{Name: "slowlog-log-slower-than", Get: func() string { return strconv.FormatInt(e.slow.slowerThan, 10) },
			Set: func(v string) error {
				n, ok := resp.ParseInt([]byte(v))
				switch {
				case !ok:
					return errors.New("argument couldn't be parsed into an integer")
				case n < -1:
					return errors.New("argument must be between -1 and 9223372036854775807 inclusive")
				}
				e.slow.slowerThan = n
				return nil
			}},
		{Name: "slowlog-max-len", Get: func() string { return strconv.Itoa(e.slow.maxLen) },
			Set: func(v string) error {
				n, ok := resp.ParseInt([]byte(v))
				switch {
				case !ok:
					return errors.New("argument couldn't be parsed into an integer")
				case n < 0:
					return errors.New("argument must be between 0 and 9223372036854775807 inclusive")
				}
				e.slow.maxLen = int(n)
				return nil
			}},
		{Name: "acllog-max-len", Get: func() string { return strconv.Itoa(e.aclLog.MaxLen) },
			Set: func(v string) error {
				n, ok := resp.ParseInt([]byte(v))
				if !ok {
					return errors.New("argument couldn't be parsed into an integer")
				}
				if n < 0 || n > 1<<31-1 {
					return errors.New("argument must be between 0 and 2147483647 inclusive")
				}
				e.aclLog.MaxLen = int(n)
				return nil
			}},
		{Name: "lfu-decay-time", Get: func() string { _, d := e.dbs[0].LFUParams(); return strconv.Itoa(d) },
			Set: func(v string) error {
				n, err := parseNonNegInt(v)
				if err != nil {
					return err
				}
				f, _ := e.dbs[0].LFUParams()
				return e.dbs[0].SetLFUParams(f, n)
			}},
	}, append(append(e.persistParams(), e.replParams()...), e.o.Params...)...)
	e.paramList = append(e.paramList, e.limitParams()...)
	e.paramList = append(e.paramList, e.outputLimitParam()) // Pub/Sub (pubsub.go)
	e.paramList = append(e.paramList, e.latencyParams()...)
	e.paramList = append(e.paramList, e.notifyParam()) // keyspace notifications (notify.go)
	if e.o.Limits.MaxBulkLen == 0 {
		e.paramList[8].Get = fixed(strconv.Itoa(512 << 20))
	}
	return e.paramList
}

// YesNoParam is a yes/no parameter as Redis has them: Get shows "yes" or
// "no", Set takes either in any case, refuses anything else with Redis's
// words, and hands the value to set.
func YesNoParam(name string, get func() bool, set func(bool)) Param {
	return Param{Name: name, Get: func() string { return YesNo(get()) }, Set: func(v string) error {
		b, err := ParseYesNo(v)
		if err == nil {
			set(b)
		}
		return err
	}}
}

// YesNo is a yes/no parameter's value as CONFIG GET shows it.
func YesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// ErrYesNo is the refusal of a yes/no parameter's value, in Redis's words.
var ErrYesNo = errors.New("argument must be 'yes' or 'no'")

// ParseYesNo reads a yes/no parameter's value as Redis does (any case).
func ParseYesNo(v string) (bool, error) {
	switch {
	case strings.EqualFold(v, "yes"):
		return true, nil
	case strings.EqualFold(v, "no"):
		return false, nil
	}
	return false, ErrYesNo
}

// parseNonNegInt reads an integer parameter of 0 to 2147483647 (Redis's
// lfu-log-factor and lfu-decay-time), refusing others in Redis's words.
func parseNonNegInt(v string) (int, error) {
	n, ok := resp.ParseInt([]byte(v))
	if !ok {
		return 0, errors.New("argument couldn't be parsed into an integer")
	}
	if n < 0 || n > 1<<31-1 {
		return 0, errors.New("argument must be between 0 and 2147483647 inclusive")
	}
	return int(n), nil
}

// ParseMemory reads a memory value of CONFIG SET as Redis's memtoull does
// (redisconf.ParseMemory: digits and an optional unit, k 1000, kb 1024),
// except that a value without digits, which memtoull reads as 0, is
// refused.
func ParseMemory(v string) (uint64, bool) {
	if v == "" || v[0] < '0' || v[0] > '9' {
		return 0, false
	}
	n, err := redisconf.ParseMemory(v)
	return n, err == nil
}

func (e *Engine) findParam(name []byte) *Param {
	ps := e.params()
	for i := range ps {
		if command.EqualFold(name, ps[i].Name) {
			return &ps[i]
		}
	}
	return nil
}

// configGet answers CONFIG GET pattern [pattern ...]: each matching
// parameter once, as a map (a flat array in RESP2).
func (e *Engine) configGet(_ *Session, r *command.Request) {
	ps := e.params()
	shown := e.configShown[:0] // the name each parameter is answered under; nil: not asked for
	for range ps {
		shown = append(shown, nil)
	}
	e.configShown = shown
	pats := append(e.configPairs[:0], r.Key)
	pats = append(pats, r.Args...)
	e.configPairs = pats
	for _, pat := range pats {
		for i := range ps {
			switch {
			case shown[i] != nil:
			case bytes.ContainsAny(pat, "[*?"):
				if glob.MatchFold(pat, bs(ps[i].Name)) {
					shown[i] = bs(ps[i].Name)
				}
			case command.EqualFold(pat, ps[i].Name):
				shown[i] = pat // a name asked for as such is answered as spelt, as Redis does
			}
		}
	}
	e.begin(command.Map)
	for i, name := range shown {
		if name != nil {
			e.addBulk(name)
			e.addCopy(command.Bulk, []byte(ps[i].Get()))
		}
	}
	e.end()
}

// configSet answers CONFIG SET parameter value [parameter value ...]: all
// are checked (known, settable, not named twice) before any is set, and
// when a value is refused the ones already set are put back.
func (e *Engine) configSet(_ *Session, r *command.Request) {
	defer e.rehot() // what the parameters set (the slow log, save, stop-writes-on-bgsave-error...)
	pairs := e.configPairs[:0]
	pairs = append(pairs, r.Key, r.Value)
	pairs = append(pairs, r.Args...)
	e.configPairs = pairs
	for i := 0; i+1 < len(pairs); i += 2 {
		p := e.findParam(pairs[i])
		switch {
		case p == nil:
			e.fail(command.Err, "ERR Unknown option or number of arguments for CONFIG SET - '", pairs[i], "'")
			return
		case p.Set == nil:
			e.configFailed(p.Name, errImmutable)
			return
		}
		for j := 0; j < i; j += 2 {
			if command.EqualFold(pairs[j], p.Name) {
				e.configFailed(p.Name, errors.New("duplicate parameter"))
				return
			}
		}
	}
	old := make([]string, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		p := e.findParam(pairs[i])
		prev := p.Get()
		if err := p.Set(string(pairs[i+1])); err != nil {
			for j := len(old) - 1; j >= 0; j-- { // put the earlier ones back
				_ = e.findParam(pairs[2*j]).Set(old[j])
			}
			e.configFailed(p.Name, err)
			return
		}
		old = append(old, prev)
	}
	// Parameters applied together (Param.Apply), once all values are in.
	for i := 0; i+1 < len(pairs); i += 2 {
		p := e.findParam(pairs[i])
		if p.Apply == nil {
			continue
		}
		if err := p.Apply(); err != nil {
			for j := len(old) - 1; j >= 0; j-- {
				_ = e.findParam(pairs[2*j]).Set(old[j])
			}
			e.configFailed(p.Name, err)
			return
		}
	}
	e.ok()
}

func (e *Engine) configFailed(name string, err error) {
	e.errBuf = append(e.errBuf[:0], "ERR CONFIG SET failed (possibly related to argument '"...)
	e.errBuf = append(e.errBuf, name...)
	e.errBuf = append(e.errBuf, "') - "...)
	e.errBuf = append(e.errBuf, err.Error()...)
	e.setError(command.Err, e.errBuf)
}

// configRewrite answers CONFIG REWRITE: the server's Rewrite writes its
// configuration file, with Redis's error texts.
func (e *Engine) configRewrite(*Session, *command.Request) {
	if e.o.Rewrite == nil {
		e.errText(command.Err, "ERR The server is running without a config file")
		return
	}
	if err := e.o.Rewrite(); err != nil {
		e.errBuf = append(append(e.errBuf[:0], "ERR Rewriting config file: "...), err.Error()...)
		e.setError(command.Err, e.errBuf)
		return
	}
	e.ok()
}

// ConfigValue returns the current value of the configuration parameter
// name as CONFIG GET shows it. Call it on the loop goroutine only.
func (e *Engine) ConfigValue(name string) (string, bool) {
	p := e.findParam([]byte(name))
	if p == nil {
		return "", false
	}
	return p.Get(), true
}

// configResetStat answers CONFIG RESETSTAT: INFO's counters start over.
func (e *Engine) configResetStat(*Session, *command.Request) {
	e.settleBatch()
	for _, st := range e.dbs {
		if st != nil {
			st.ResetStats()
		}
	}
	e.errors = e.errors[:0]
	e.cmd = [command.NumOps]cmdStat{}
	clear(e.lat.hist[:]) // latency-tracking's histograms, as Redis resets them
	e.ok()
}

// limitParams are the collection encodings' thresholds, under their Redis
// 7.0 names and their older ziplist aliases, in the order Redis's CONFIG
// GET lists them.
func (e *Engine) limitParams() []Param {
	limit := func(field func(*store.Limits) *int, lo, hi int64) Param {
		return Param{
			Get: func() string {
				l := e.dbs[0].Options().Limits
				return strconv.Itoa(*field(&l))
			},
			Set: func(v string) error {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return errors.New("argument couldn't be parsed into an integer")
				}
				if n < lo || n > hi {
					return fmt.Errorf("argument must be between %d and %d inclusive", lo, hi)
				}
				l := e.dbs[0].Options().Limits
				*field(&l) = int(n)
				e.dbs[0].SetLimits(l)
				return nil
			},
		}
	}
	named := func(name string, p Param) Param { p.Name = name; return p }
	hashValue := limit(func(l *store.Limits) *int { return &l.HashMaxListpackValue }, 0, math.MaxInt64)
	hashEntries := limit(func(l *store.Limits) *int { return &l.HashMaxListpackEntries }, 0, math.MaxInt64)
	listSize := limit(func(l *store.Limits) *int { return &l.ListMaxListpackSize }, math.MinInt32, math.MaxInt32)
	zsetEntries := limit(func(l *store.Limits) *int { return &l.ZSetMaxListpackEntries }, 0, math.MaxInt64)
	zsetValue := limit(func(l *store.Limits) *int { return &l.ZSetMaxListpackValue }, 0, math.MaxInt64)
	return []Param{
		named("hash-max-ziplist-value", hashValue), named("hash-max-listpack-value", hashValue),
		named("hash-max-ziplist-entries", hashEntries), named("hash-max-listpack-entries", hashEntries),
		named("set-max-intset-entries", limit(func(l *store.Limits) *int { return &l.SetMaxIntsetEntries }, 0, math.MaxInt64)),
		named("list-max-ziplist-size", listSize), named("list-max-listpack-size", listSize),
		named("zset-max-ziplist-entries", zsetEntries), named("zset-max-listpack-entries", zsetEntries),
		named("zset-max-ziplist-value", zsetValue), named("zset-max-listpack-value", zsetValue),
	}
}
