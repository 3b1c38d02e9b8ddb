package engine

import (
	"strconv"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto/resp"
)

// SLOWLOG: the commands whose execution took at least
// slowlog-log-slower-than microseconds, newest first, at most
// slowlog-max-len of them, as Redis 7.0 keeps them. While the log is on
// (a threshold of 0 or more, the default 10000) every command is timed
// with one read of the monotonic clock, at its end (see Engine.timed); an
// entry (which copies the command's words) is made only for a command that
// is logged, so a request that is not logged allocates nothing.

// Redis's defaults and limits (slowlog.h).
const (
	DefaultSlowlogSlowerThan = 10000 // µs
	DefaultSlowlogMaxLen     = 128
	slowlogMaxArgc           = 32
	slowlogMaxString         = 128
)

// slowEntry is one SLOWLOG entry.
type slowEntry struct {
	id     int64
	unix   int64 // seconds
	micros int64
	argv   [][]byte
	peer   string
	name   string
}

// slowlog is the engine's slow log: entries oldest first.
type slowlog struct {
	slowerThan int64 // µs; negative: off
	maxLen     int
	nextID     int64
	entries    []slowEntry
}

// slowlogPush logs r, which session s ran in nanos, if it was slow
// enough: Redis's slowlogPushCurrentCommand.
func (e *Engine) slowlogPush(s *Session, r *command.Request, nanos int64) {
	sl := &e.slow
	if sl.slowerThan < 0 || nanos/1000 < sl.slowerThan {
		return
	}
	spec := command.Lookup(r.Op)
	if spec == nil || spec.Flags&command.SkipSlowlog != 0 {
		return
	}
	words := e.argv
	if words == nil {
		w, err := e.monEnc.Words(r)
		if err != nil {
			return
		}
		words = w
	}
	e.slowlogAdd(s, slowlogArgv(r.Op, words), nanos)
}

// slowlogAdd adds an entry for a command of session s with argv (its
// words as an entry keeps them, see slowlogArgv) that took nanos.
func (e *Engine) slowlogAdd(s *Session, argv [][]byte, nanos int64) {
	sl := &e.slow
	en := slowEntry{id: sl.nextID, unix: wallClock().Unix(), micros: nanos / 1000,
		argv: argv, peer: s.conn.Addr, name: string(s.name)}
	sl.nextID++
	sl.entries = append(sl.entries, en)
	if over := len(sl.entries) - sl.maxLen; over > 0 {
		n := copy(sl.entries, sl.entries[over:])
		clear(sl.entries[n:])
		sl.entries = sl.entries[:n]
	}
}

var redacted = []byte("(redacted)")

// slowlogArgv copies a command's words as Redis keeps them in an entry:
// at most 32 (the last saying how many more there were), each at most 128
// bytes (then how many more bytes), secrets replaced by "(redacted)" as
// Redis redacts them (AUTH, HELLO's AUTH, ACL SETUSER's rules, CONFIG
// SET requirepass).
func slowlogArgv(op command.Op, words [][]byte) [][]byte {
	argc := len(words)
	n := min(argc, slowlogMaxArgc)
	out := make([][]byte, n)
	for j := 0; j < n; j++ {
		w := words[j]
		switch {
		case n != argc && j == n-1:
			out[j] = []byte("... (" + strconv.Itoa(argc-n+1) + " more arguments)")
			continue
		case redact(op, words, j):
			out[j] = redacted
			continue
		case len(w) > slowlogMaxString:
			b := append([]byte(nil), w[:slowlogMaxString]...)
			out[j] = append(b, "... ("+strconv.Itoa(len(w)-slowlogMaxString)+" more bytes)"...)
			continue
		}
		out[j] = append([]byte(nil), w...)
	}
	return out
}

// redact reports whether word j of a command is a secret Redis hides.
func redact(op command.Op, words [][]byte, j int) bool {
	switch op {
	case command.OpAuth:
		return j >= 1
	case command.OpACLSetUser:
		return j >= 2
	case command.OpHello:
		for i := 2; i+2 < len(words) && i < j; i++ {
			if command.EqualFold(words[i], "auth") && (j == i+1 || j == i+2) {
				return true
			}
		}
	case command.OpConfigSet:
		return j >= 3 && j%2 == 1 && command.EqualFold(words[j-1], "requirepass")
	case command.OpMigrate:
		for i := 6; i < len(words) && i < j; i++ {
			switch {
			case command.EqualFold(words[i], "auth"):
				return j == i+1
			case command.EqualFold(words[i], "auth2"):
				return j == i+1 || j == i+2
			}
		}
	}
	return false
}

func (e *Engine) slowlogGet(_ *Session, r *command.Request) {
	e.settleBatch()
	n := int64(10)
	if len(r.Args) > 1 {
		e.errText(command.Err, "ERR unknown subcommand or wrong number of arguments for 'GET'. Try SLOWLOG HELP.")
		if len(e.argv) > 1 {
			e.fail(command.Err, "ERR unknown subcommand or wrong number of arguments for '", e.argv[1], "'. Try SLOWLOG HELP.")
		}
		return
	}
	if len(r.Args) == 1 {
		v, ok := resp.ParseInt(r.Args[0])
		if !ok || v < -1 {
			e.errText(command.Err, "ERR count should be greater than or equal to -1")
			return
		}
		n = v
	}
	entries := e.slow.entries
	if n == -1 || n > int64(len(entries)) {
		n = int64(len(entries))
	}
	e.begin(command.Array)
	for i := len(entries) - 1; i >= len(entries)-int(n); i-- {
		en := &entries[i]
		e.push(command.Array)
		e.addInt(en.id)
		e.addInt(en.unix)
		e.addInt(en.micros)
		e.push(command.Array)
		for _, a := range en.argv {
			e.addBulk(a)
		}
		e.pop()
		e.addBulk(bs(en.peer))
		e.addBulk(bs(en.name))
		e.pop()
	}
	e.end()
}

func (e *Engine) slowlogLen(*Session, *command.Request) {
	e.settleBatch()
	e.integer(int64(len(e.slow.entries)))
}

func (e *Engine) slowlogReset(*Session, *command.Request) {
	e.settleBatch()
	clear(e.slow.entries)
	e.slow.entries = e.slow.entries[:0]
	e.ok()
}
