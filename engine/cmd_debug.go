package engine

import (
	"strconv"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/store"
)

// DEBUG: of Redis's many subcommands goblin answers only OBJECT, which
// reads; the others (SEGFAULT, RELOAD, SLEEP, SET-ACTIVE-EXPIRE...) exist
// to test or break a Redis process and are refused by name.

// debug answers DEBUG OBJECT key in Redis 7.0's format (debugCommand):
//
//	Value at:0x0 refcount:1 encoding:embstr serializedlength:6 lru:9964231 lru_seconds_idle:4
//
// serializedlength is the length of the value's RDB serialization (the
// DUMP payload without its type byte and footer), lru the store's 24-bit
// LRU clock at the key's last access, lru_seconds_idle OBJECT IDLETIME.
// goblin keeps no object address, so "Value at" is 0x0, and it omits the
// ql_* fields Redis adds for a quicklist. Like Redis's, it is not an
// access to the key.
func (e *Engine) debug(s *Session, r *command.Request) {
	sub := r.Args[0]
	if !command.EqualFold(sub, "object") {
		e.fail(command.Err, "ERR DEBUG subcommand '", sub, "' is not supported by goblin (only DEBUG OBJECT is)")
		return
	}
	if len(r.Args) != 2 { // Redis's addReplySubcommandSyntaxError
		e.fail(command.Err, "ERR unknown subcommand or wrong number of arguments for '", sub, "'. Try DEBUG HELP.")
		return
	}
	key := r.Args[1]
	enc := e.st.EncodingOf(key)
	if enc == store.EncodingNone {
		e.errText(command.Err, "ERR no such key")
		return
	}
	idle, _ := e.st.IdleTime(key)
	lru := (int64(e.st.LRUClock()) - idle) & (1<<24 - 1)
	noTouch := s.noTouch
	e.st.SetNoTouch(true) // refCount reads an integer's value: not an access either
	refs := e.refCount(key, enc)
	e.st.SetNoTouch(noTouch)
	payload, _, _ := e.appendDump(e.dumpBuf[:0], key)
	e.dumpBuf = payload[:0]
	serialized := max(len(payload)-11, 0) // type byte, 2-byte RDB version, 8-byte CRC
	b := append(e.errBuf[:0], "Value at:0x0 refcount:"...)
	b = strconv.AppendInt(b, refs, 10)
	b = append(b, " encoding:"...)
	b = append(b, enc.String()...)
	b = append(b, " serializedlength:"...)
	b = strconv.AppendInt(b, int64(serialized), 10)
	b = append(b, " lru:"...)
	b = strconv.AppendInt(b, lru, 10)
	b = append(b, " lru_seconds_idle:"...)
	b = strconv.AppendInt(b, idle, 10)
	e.errBuf = b
	e.res.Kind, e.res.Value = command.Simple, b
}

func init() { handlers[command.OpDebug] = (*Engine).debug }
