package engine

import (
	"errors"
	"strconv"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/internal/glob"
	"github.com/goblin-kv/goblin/store"
)

// Keyspace notifications, as Redis 7.0 has them (src/notify.c): with
// notify-keyspace-events set, every change to a key is published on
// __keyspace@<db>__:<key> (message: the event's name) and
// __keyevent@<db>__:<event> (message: the key), with Redis's event names,
// to Pub/Sub subscribers of those channels or of patterns matching them.
//
// Where the events come from: Redis calls notifyKeyspaceEvent inside each
// command; goblin looks at each write command from outside instead, in
// one place. Before the command runs (knBefore) it notes which of the
// command's keys exist (a lookup that, as the command's own would, expires
// a key whose time has passed, which is the "expired" event) and publishes
// "keymiss" for the missing keys of the commands whose lookups Redis
// reports; after it (knAfter) it compares: a key that appeared is "new",
// the command's own event follows when it changed the data set (the
// store's modification counter moved, the test propagation uses), and a
// container it emptied is "del". The commands whose events depend on more
// than that (RENAME, SMOVE, LMOVE, the pops of several keys, the *STORE
// commands...) have their own rule below. Keys expired or evicted by the
// store on its own are reported through store.OnRemove.
//
// Cost while off: execute's slow-path test already has one condition per
// rare feature; notifications fold into the one replication uses
// (Engine.hooked), so with both off the fast path is unchanged.

// Notification classes: Redis's NOTIFY_* bits (src/server.h).
const (
	nfKeyspace = 1 << 0  // K
	nfKeyevent = 1 << 1  // E
	nfGeneric  = 1 << 2  // g
	nfString   = 1 << 3  // $
	nfList     = 1 << 4  // l
	nfSet      = 1 << 5  // s
	nfHash     = 1 << 6  // h
	nfZSet     = 1 << 7  // z
	nfExpired  = 1 << 8  // x
	nfEvicted  = 1 << 9  // e
	nfStream   = 1 << 10 // t
	nfKeyMiss  = 1 << 11 // m
	nfModule   = 1 << 13 // d
	nfNew      = 1 << 14 // n
	// nfAll is A: every class but m and n.
	nfAll = nfGeneric | nfString | nfList | nfSet | nfHash | nfZSet | nfExpired | nfEvicted | nfStream | nfModule
)

// errNotifyFlags is CONFIG SET's complaint, Redis's text.
//
//lint:ignore ST1005 Redis's text, capital and full stop included
var errNotifyFlags = errors.New("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")

// parseNotifyFlags reads notify-keyspace-events (Redis's
// keyspaceEventsStringToFlags).
func parseNotifyFlags(s string) (int, bool) {
	f := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case 'A':
			f |= nfAll
		case 'g':
			f |= nfGeneric
		case '$':
			f |= nfString
		case 'l':
			f |= nfList
		case 's':
			f |= nfSet
		case 'h':
			f |= nfHash
		case 'z':
			f |= nfZSet
		case 'x':
			f |= nfExpired
		case 'e':
			f |= nfEvicted
		case 'K':
			f |= nfKeyspace
		case 'E':
			f |= nfKeyevent
		case 't':
			f |= nfStream
		case 'm':
			f |= nfKeyMiss
		case 'd':
			f |= nfModule
		case 'n':
			f |= nfNew
		default:
			return 0, false
		}
	}
	return f, true
}

// ValidNotifyKeyspaceEvents reports whether s is a valid
// notify-keyspace-events value, and if not, why (Redis's error text).
func ValidNotifyKeyspaceEvents(s string) error {
	if _, ok := parseNotifyFlags(s); !ok {
		return errNotifyFlags
	}
	return nil
}

// notifyFlagsString writes flags as CONFIG GET shows them (Redis's
// keyspaceEventsFlagsToString: with every class of A, "A" alone, which
// also hides n).
func notifyFlagsString(f int) string {
	var b []byte
	if f&nfAll == nfAll {
		b = append(b, 'A')
	} else {
		for _, c := range [...]struct {
			bit int
			ch  byte
		}{{nfGeneric, 'g'}, {nfString, '$'}, {nfList, 'l'}, {nfSet, 's'}, {nfHash, 'h'}, {nfZSet, 'z'},
			{nfExpired, 'x'}, {nfEvicted, 'e'}, {nfStream, 't'}, {nfModule, 'd'}, {nfNew, 'n'}} {
			if f&c.bit != 0 {
				b = append(b, c.ch)
			}
		}
	}
	if f&nfKeyspace != 0 {
		b = append(b, 'K')
	}
	if f&nfKeyevent != 0 {
		b = append(b, 'E')
	}
	if f&nfKeyMiss != 0 {
		b = append(b, 'm')
	}
	return string(b)
}

// notifyState is the engine's keyspace-notification state; loop goroutine
// only.
type notifyState struct {
	flags int  // notify-keyspace-events
	on    bool // flags publish something: K or E, and a class
	// The command being looked at: its keys, and which existed before it
	// ran (knBefore), and the modification count after knBefore's lookups.
	keys    [][]byte
	existed []bool
	mods    uint64
	dstHad  bool // SMOVE: the destination held the member already
	miss    bool // the command's missing keys are "keymiss" events
	op      command.Op
	strLen  int      // SETBIT: the string's length before
	from    *Session // the client being served (its own messages go before its reply), nil in Tick
	ch      []byte   // the channel being published to
	db      []byte
}

// setNotifyFlags applies notify-keyspace-events.
func (e *Engine) setNotifyFlags(f int) {
	e.kn.flags = f
	e.kn.on = f&(nfKeyspace|nfKeyevent) != 0 && f&^(nfKeyspace|nfKeyevent) != 0
	e.rehook()
	for _, st := range e.dbs {
		e.watchRemovals(st)
	}
}

// notifyParam is notify-keyspace-events for CONFIG GET and SET.
func (e *Engine) notifyParam() Param {
	return Param{Name: "notify-keyspace-events",
		Get: func() string { return notifyFlagsString(e.kn.flags) },
		Set: func(v string) error {
			f, ok := parseNotifyFlags(v)
			if !ok {
				// Redis puts the old value back from its CONFIG GET
				// form, which loses n beside A.
				f, _ = parseNotifyFlags(notifyFlagsString(e.kn.flags))
				e.setNotifyFlags(f)
				return errNotifyFlags
			}
			e.setNotifyFlags(f)
			return nil
		}}
}

// notifyKey publishes one event about key in database db, if its class is
// enabled (Redis's notifyKeyspaceEvent).
func (e *Engine) notifyKey(class int, event string, key []byte, db int) {
	f := e.kn.flags
	if f&class == 0 || !e.kn.on {
		return
	}
	if len(e.ps.channels) == 0 && len(e.ps.patterns) == 0 {
		return // nobody listens: nothing to format
	}
	e.kn.db = strconv.AppendInt(e.kn.db[:0], int64(db), 10)
	if f&nfKeyspace != 0 {
		ch := append(e.kn.ch[:0], "__keyspace@"...)
		ch = append(ch, e.kn.db...)
		ch = append(ch, "__:"...)
		ch = append(ch, key...)
		e.kn.ch = ch
		e.publishTo(ch, bs(event))
	}
	if f&nfKeyevent != 0 {
		ch := append(e.kn.ch[:0], "__keyevent@"...)
		ch = append(ch, e.kn.db...)
		ch = append(ch, "__:"...)
		ch = append(ch, event...)
		e.kn.ch = ch
		e.publishTo(ch, key)
	}
}

// publishTo delivers msg on channel to its subscribers and to the patterns
// it matches, as PUBLISH does, from the client being served.
func (e *Engine) publishTo(channel, msg []byte) {
	from := e.kn.from
	e.deliver(from, e.ps.channels[string(channel)], "message", channel, msg)
	for _, p := range e.ps.patterns {
		if glob.Match(p.name, channel) {
			e.deliverPattern(from, p, channel, msg)
		}
	}
}

// notifyRemoved reports a key the store expired or evicted on its own.
func (e *Engine) notifyRemoved(db int, key []byte, evicted bool) {
	if evicted {
		e.notifyKey(nfEvicted, "evicted", key, db)
	} else {
		e.notifyKey(nfExpired, "expired", key, db)
	}
}

// The rules: how a command's events are found.
const (
	knNone   = iota
	knSingle // the key: [new] event [del when emptied], when the data set changed
	knSet    // SET and its kin: [new] set [expire]
	knDel    // DEL, UNLINK, GETDEL: del for each key that went
	knExpire // EXPIRE...: expire, or persist, or del when the time has passed
	knMSet   // MSET, MSETNX: [new] set for each key
	knRename
	knCopy
	knMove
	knSMove
	knLMove
	knStore // *STORE, BITOP: [new] event on the destination, or del when emptied
	knPop   // the pops of one of several keys: the key is the answer's first element
	knRestore
)

type knRule struct {
	kind  uint8
	class int
	event string
	// reply says where Redis adds the command's reply among its
	// notifications (a RESP3 client subscribed to its own keys sees it).
	reply uint8
}

// Where the reply goes among the notifications.
const (
	replyLast     = iota // after every one (the reply is added last)
	replyFirst           // before every one (keymiss and expired excepted: lookups come first)
	replyAfterNew        // after "new" (the key is created before the reply, the rest after it)
)

// knRules holds each write command's rule, indexed by Op.
var knRules [command.NumOps]knRule

func init() {
	str := func(ev string) knRule { return knRule{knSingle, nfString, ev, 0} }
	for op, r := range map[command.Op]knRule{
		command.OpSet: {knSet, nfString, "set", 0}, command.OpSetNX: {knSet, nfString, "set", 0},
		command.OpSetEX: {knSet, nfString, "set", 0}, command.OpPSetEX: {knSet, nfString, "set", 0},
		command.OpGetSet: {knSet, nfString, "set", 0},
		command.OpAppend: str("append"), command.OpSetRange: str("setrange"),
		command.OpIncr: str("incrby"), command.OpIncrBy: str("incrby"), command.OpDecr: str("incrby"),
		command.OpDecrBy: str("incrby"), command.OpIncrByFloat: str("incrbyfloat"),
		command.OpSetBit: str("setbit"), command.OpBitField: str("setbit"),
		command.OpMSet: {knMSet, nfString, "set", 0}, command.OpMSetNX: {knMSet, nfString, "set", 0},
		command.OpBitOp: {knStore, nfString, "set", 0},
		command.OpDel:   {knDel, nfGeneric, "del", 0}, command.OpUnlink: {knDel, nfGeneric, "del", 0},
		command.OpGetDel: {knDel, nfGeneric, "del", 0},
		command.OpExpire: {knExpire, nfGeneric, "expire", 0}, command.OpPExpire: {knExpire, nfGeneric, "expire", 0},
		command.OpExpireAt: {knExpire, nfGeneric, "expire", 0}, command.OpPExpireAt: {knExpire, nfGeneric, "expire", 0},
		command.OpGetEX: {knExpire, nfGeneric, "expire", 0}, command.OpPersist: {knExpire, nfGeneric, "persist", 0},
		command.OpRename: {knRename, nfGeneric, "", 0}, command.OpRenameNX: {knRename, nfGeneric, "", 0},
		command.OpCopy: {knCopy, nfGeneric, "copy_to", 0}, command.OpMove: {knMove, nfGeneric, "", 0},
		command.OpRestore: {knRestore, nfGeneric, "restore", 0}, command.OpRestoreAsking: {knRestore, nfGeneric, "restore", 0},
		command.OpHSet: {knSingle, nfHash, "hset", 0}, command.OpHMSet: {knSingle, nfHash, "hset", 0},
		command.OpHSetNX: {knSingle, nfHash, "hset", 0}, command.OpHDel: {knSingle, nfHash, "hdel", 0},
		command.OpHIncrBy: {knSingle, nfHash, "hincrby", 0}, command.OpHIncrByFloat: {knSingle, nfHash, "hincrbyfloat", 0},
		command.OpSAdd: {knSingle, nfSet, "sadd", 0}, command.OpSRem: {knSingle, nfSet, "srem", 0},
		command.OpSPop: {knSingle, nfSet, "spop", 0}, command.OpSMove: {knSMove, nfSet, "", 0},
		command.OpSInterStore: {knStore, nfSet, "sinterstore", 0}, command.OpSUnionStore: {knStore, nfSet, "sunionstore", 0},
		command.OpSDiffStore: {knStore, nfSet, "sdiffstore", 0},
		command.OpLPush:      {knSingle, nfList, "lpush", 0}, command.OpRPush: {knSingle, nfList, "rpush", 0},
		command.OpLPushX: {knSingle, nfList, "lpush", 0}, command.OpRPushX: {knSingle, nfList, "rpush", 0},
		command.OpLPop: {knSingle, nfList, "lpop", 0}, command.OpRPop: {knSingle, nfList, "rpop", 0},
		command.OpLSet: {knSingle, nfList, "lset", 0}, command.OpLInsert: {knSingle, nfList, "linsert", 0},
		command.OpLRem: {knSingle, nfList, "lrem", 0}, command.OpLTrim: {knSingle, nfList, "ltrim", 0},
		command.OpLMove: {knLMove, nfList, "", 0}, command.OpRPopLPush: {knLMove, nfList, "", 0},
		command.OpBLMove: {knLMove, nfList, "", 0}, command.OpBRPopLPush: {knLMove, nfList, "", 0},
		command.OpLMPop: {knPop, nfList, "", 0}, command.OpBLMPop: {knPop, nfList, "", 0},
		command.OpBLPop: {knPop, nfList, "lpop", 0}, command.OpBRPop: {knPop, nfList, "rpop", 0},
		command.OpZAdd: {knSingle, nfZSet, "zadd", 0}, command.OpZIncrBy: {knSingle, nfZSet, "zincr", 0},
		command.OpZRem: {knSingle, nfZSet, "zrem", 0}, command.OpZRemRangeByRank: {knSingle, nfZSet, "zremrangebyrank", 0},
		command.OpZRemRangeByScore: {knSingle, nfZSet, "zremrangebyscore", 0},
		command.OpZRemRangeByLex:   {knSingle, nfZSet, "zremrangebylex", 0},
		command.OpZPopMin:          {knSingle, nfZSet, "zpopmin", 0}, command.OpZPopMax: {knSingle, nfZSet, "zpopmax", 0},
		command.OpZRangeStore: {knStore, nfZSet, "zrangestore", 0}, command.OpZUnionStore: {knStore, nfZSet, "zunionstore", 0},
		command.OpZInterStore: {knStore, nfZSet, "zinterstore", 0}, command.OpZDiffStore: {knStore, nfZSet, "zdiffstore", 0},
		command.OpZMPop: {knPop, nfZSet, "", 0}, command.OpBZMPop: {knPop, nfZSet, "", 0},
		command.OpBZPopMin: {knPop, nfZSet, "zpopmin", 0}, command.OpBZPopMax: {knPop, nfZSet, "zpopmax", 0},
	} {
		knRules[op] = r
	}
	for _, op := range []command.Op{command.OpGetSet, command.OpGetDel, command.OpGetEX,
		command.OpLPop, command.OpRPop, command.OpLMPop, command.OpBLPop, command.OpBRPop, command.OpBLMPop,
		command.OpZPopMin, command.OpZPopMax, command.OpBZPopMin, command.OpBZPopMax, command.OpZMPop, command.OpBZMPop} {
		knRules[op].reply = replyFirst
	}
	for _, op := range []command.Op{command.OpHSet, command.OpHMSet, command.OpHSetNX, command.OpHIncrBy,
		command.OpHIncrByFloat, command.OpLPush, command.OpRPush, command.OpLPushX, command.OpRPushX,
		command.OpZAdd, command.OpZIncrBy, command.OpBitField, command.OpLSet, command.OpSInterStore, command.OpSUnionStore,
		command.OpSDiffStore, command.OpZRangeStore, command.OpZUnionStore, command.OpZInterStore,
		command.OpZDiffStore} {
		knRules[op].reply = replyAfterNew
	}
}

// knMissOp reports whether r's lookups of missing keys are "keymiss"
// events (Redis's lookupKeyRead without LOOKUP_NONOTIFY): the read-only
// commands with keys but OBJECT's and MEMORY USAGE's, and the writes that
// read a key first.
func knMissOp(r *command.Request, spec *command.Spec) bool {
	switch r.Op {
	case command.OpObjectEncoding, command.OpObjectFreq, command.OpObjectIdleTime, command.OpObjectRefCount,
		command.OpMemoryUsage, command.OpPublish, command.OpSPublish:
		return false
	case command.OpGetSet, command.OpGetDel, command.OpGetEX, command.OpCopy, command.OpSUnionStore,
		command.OpSDiffStore, command.OpZRangeStore, command.OpBitOp:
		return true
	case command.OpSet:
		return r.Flags&command.FlagGet != 0
	}
	return spec.Flags&command.Write == 0
}

// knBefore notes, for the command about to run, which of its keys exist
// (a lookup that, as the command's own, expires a key whose time has
// passed: the "expired" event comes first, as in Redis).
func (e *Engine) knBefore(from *Session, db int, r *command.Request) {
	k := &e.kn
	k.from = from
	k.keys, k.existed = k.keys[:0], k.existed[:0]
	if !e.inExec {
		e.ps.after = 0 // a mark left by a command whose messages no one received
	}
	rule := knRules[r.Op]
	k.miss = false
	if e.kn.flags&nfKeyMiss != 0 {
		if spec := command.Lookup(r.Op); spec != nil && len(spec.Keys) > 0 {
			k.miss = knMissOp(r, spec)
		}
	}
	if rule.kind == knNone && !k.miss {
		return
	}
	r.EachKey(func(key []byte) {
		k.keys = append(k.keys, key)
		k.existed = append(k.existed, e.st.Exists(key))
	})
	switch {
	case rule.kind == knSMove && len(r.Args) > 1:
		k.dstHad, _ = e.st.SIsMember(r.Args[0], r.Args[1])
	case r.Op == command.OpSetBit:
		k.strLen = e.st.StrLen(r.Key)
	}
	k.mods = e.mods()
}

// knMisses publishes "keymiss" for the keys the command looked up and did
// not find. A command that failed (a key of the wrong type) stopped
// looking at its first key that existed.
func (e *Engine) knMisses(db int, r *command.Request) {
	k := &e.kn
	keys, existed := k.keys, k.existed
	switch r.Op {
	case command.OpCopy:
		keys, existed = keys[:min(1, len(keys))], existed[:min(1, len(existed))] // the source
	case command.OpSUnionStore, command.OpSDiffStore, command.OpZRangeStore, command.OpBitOp:
		if len(keys) > 0 {
			keys, existed = keys[1:], existed[1:] // the sources
		}
	}
	failed := e.res.Kind == command.Error
	for i, key := range keys {
		if existed[i] {
			if failed {
				return
			}
			continue
		}
		e.notifyKey(nfKeyMiss, "keymiss", key, db)
	}
}

// replyHere marks that the messages published from now on go after the
// reply of the client being served, where Redis adds the reply before it
// notifies (RESP3 clients subscribed to their own keys see the
// difference); EXEC places each command's reply among its messages the
// same way (cmd_tx.go).
func (e *Engine) replyHere() {
	if e.kn.from != nil && e.ps.after == 0 {
		e.ps.after = len(e.ps.out) + 1
	}
}

// existedAt returns whether the i-th key existed before the command.
func (e *Engine) existedAt(i int) bool { return i < len(e.kn.existed) && e.kn.existed[i] }

// knAfter publishes the events of the command that has just run in
// database db (see notifyState).
func (e *Engine) knAfter(db int, r *command.Request) {
	if e.kn.miss {
		e.knMisses(db, r)
	}
	rule := knRules[r.Op]
	if rule.kind == knNone || e.res.Kind == command.Error {
		return
	}
	switch rule.reply {
	case replyFirst:
		e.replyHere()
	case replyAfterNew:
		defer e.replyHere() // a rule with a new key calls it after "new"
	}
	if r.Op == command.OpSet && r.Flags&command.FlagGet != 0 {
		e.replyHere()
	}
	changed := e.mods() != e.kn.mods
	st := e.dbs[db]
	switch rule.kind {
	case knSingle:
		if r.Op == command.OpSetBit && e.existedAt(0) && e.res.Integer == r.Amount2 && e.kn.strLen > int(uint64(r.Amount)>>3) {
			changed = false // Redis: the bit was already so and the string did not grow
		}
		if !changed && !(r.Op == command.OpLTrim && e.existedAt(0)) { // Redis: LTRIM always notifies
			return
		}
		ev := rule.event
		e.kn.op = r.Op
		if r.Op == command.OpZAdd && zaddIncr(r.Args) {
			ev = "zincr"
		}
		e.knChanged(db, st, r.Key, e.existedAt(0), rule.class, ev)
	case knSet:
		if !changed {
			return
		}
		// Only when "new" is asked for: the lookup expires a key whose
		// time has passed, and a SET PX whose own command outlived the
		// expiry (a stall longer than it) reported "expired" inside the
		// SET, which Redis, whose command sees one time, never does.
		if e.kn.flags&nfNew != 0 && !e.existedAt(0) && st.Exists(r.Key) {
			e.notifyKey(nfNew, "new", r.Key, db)
		}
		e.notifyKey(nfString, "set", r.Key, db)
		if r.Op == command.OpSetEX || r.Op == command.OpPSetEX ||
			(r.Op == command.OpSet && r.Expiry != command.ExpiryNone && r.Flags&command.FlagKeepTTL == 0) {
			e.notifyKey(nfGeneric, "expire", r.Key, db)
		}
	case knMSet:
		if !changed {
			return
		}
		for i, key := range e.kn.keys {
			if !e.existedAt(i) {
				e.notifyKey(nfNew, "new", key, db)
			}
			e.notifyKey(nfString, "set", key, db)
		}
	case knDel:
		for i, key := range e.kn.keys {
			if e.existedAt(i) && !st.Exists(key) && !seenBefore(e.kn.keys, i) {
				e.notifyKey(nfGeneric, "del", key, db)
			}
		}
	case knExpire:
		if !changed {
			return
		}
		switch t := st.ExpireTime(r.Key); {
		case t == -2:
			e.notifyKey(nfGeneric, "del", r.Key, db)
		case t == -1:
			e.notifyKey(nfGeneric, "persist", r.Key, db)
		default:
			if r.Op != command.OpGetEX {
				e.replyHere() // EXPIRE answers, then notifies
			}
			e.notifyKey(nfGeneric, "expire", r.Key, db)
		}
	case knRestore: // the key is added anew, REPLACE or not
		e.notifyKey(nfNew, "new", r.Key, db)
		e.notifyKey(nfGeneric, "restore", r.Key, db)
	case knRename:
		if len(r.Args) == 0 || string(r.Key) == string(r.Args[0]) || (e.res.Kind == command.Integer && e.res.Integer == 0) {
			return
		}
		e.notifyKey(nfNew, "new", r.Args[0], db)
		e.notifyKey(nfGeneric, "rename_from", r.Key, db)
		e.notifyKey(nfGeneric, "rename_to", r.Args[0], db)
	case knCopy:
		if e.res.Kind != command.Integer || e.res.Integer != 1 || len(r.Args) == 0 {
			return
		}
		to := db
		if r.Flags&command.FlagDB != 0 {
			to = int(r.Amount)
		}
		e.notifyKey(nfNew, "new", r.Args[0], to)
		e.notifyKey(nfGeneric, "copy_to", r.Args[0], to)
	case knMove:
		if e.res.Kind != command.Integer || e.res.Integer != 1 {
			return
		}
		to := int(r.Amount)
		e.notifyKey(nfNew, "new", r.Key, to)
		e.notifyKey(nfGeneric, "move_from", r.Key, db)
		e.notifyKey(nfGeneric, "move_to", r.Key, to)
	case knSMove:
		if e.res.Kind != command.Integer || e.res.Integer != 1 || len(r.Args) < 2 || string(r.Key) == string(r.Args[0]) {
			return
		}
		e.notifyKey(nfSet, "srem", r.Key, db)
		if !st.Exists(r.Key) {
			e.notifyKey(nfGeneric, "del", r.Key, db)
		}
		if !e.kn.dstHad {
			if !e.existedAt(1) {
				e.notifyKey(nfNew, "new", r.Args[0], db)
			}
			e.notifyKey(nfSet, "sadd", r.Args[0], db)
		}
	case knLMove:
		if e.res.Kind != command.Bulk || len(r.Args) == 0 {
			return
		}
		fromLeft, toLeft := false, true // RPOPLPUSH
		if (r.Op == command.OpLMove || r.Op == command.OpBLMove) && len(r.Args) >= 3 {
			fromLeft, toLeft = command.EqualFold(r.Args[1], "left"), command.EqualFold(r.Args[2], "left")
		}
		src, dst := r.Key, r.Args[0]
		if string(src) != string(dst) && !e.existedAt(1) {
			e.notifyKey(nfNew, "new", dst, db)
		}
		e.notifyKey(nfList, pick(toLeft, "lpush", "rpush"), dst, db)
		e.replyHere() // Redis answers with the element once it is pushed
		e.notifyKey(nfList, pick(fromLeft, "lpop", "rpop"), src, db)
		if !st.Exists(src) {
			e.notifyKey(nfGeneric, "del", src, db)
		}
	case knStore:
		switch {
		case st.Exists(r.Key):
			if !e.existedAt(0) {
				e.notifyKey(nfNew, "new", r.Key, db)
			}
			if rule.reply == replyAfterNew {
				e.replyHere()
			}
			e.notifyKey(rule.class, rule.event, r.Key, db)
		case e.existedAt(0):
			if rule.class == nfZSet {
				e.replyHere() // the sorted-set stores answer before they delete
			}
			e.notifyKey(nfGeneric, "del", r.Key, db)
		}
	case knPop:
		if len(e.res.Items) == 0 || e.res.Kind == command.Nil {
			return
		}
		key := e.res.Items[0].Value
		ev := rule.event
		if ev == "" { // LMPOP, ZMPOP and their blocking forms: the side is after the keys
			nk := int(r.Amount)
			if nk < 1 || nk > len(r.Args) {
				return
			}
			where := r.Args[nk-1]
			switch {
			case command.EqualFold(where, "left"):
				ev = "lpop"
			case command.EqualFold(where, "right"):
				ev = "rpop"
			case command.EqualFold(where, "min"):
				ev = "zpopmin"
			default:
				ev = "zpopmax"
			}
		}
		e.notifyKey(rule.class, ev, key, db)
		if !st.Exists(key) {
			e.notifyKey(nfGeneric, "del", key, db)
		}
	}
}

// knChanged publishes a one-key change: new when the key appeared, the
// event, del when the command emptied it.
func (e *Engine) knChanged(db int, st *store.Store, key []byte, existed bool, class int, event string) {
	exists := st.Exists(key)
	if !existed && exists {
		e.notifyKey(nfNew, "new", key, db)
	}
	if knRules[e.kn.op].reply == replyAfterNew {
		e.replyHere()
	}
	e.notifyKey(class, event, key, db)
	if e.kn.op == command.OpSPop {
		e.replyHere() // SPOP answers, then deletes the emptied set
	}
	if existed && !exists {
		e.notifyKey(nfGeneric, "del", key, db)
	}
}

// knServed publishes the events of a blocked client's pop, served after
// another client's write (blocking.go); r is the pop as the non-blocking
// command, or the BLMOVE itself.
func (e *Engine) knServed(db int, op command.Op, key []byte) {
	st := e.dbs[db]
	class, ev := nfList, ""
	switch op {
	case command.OpBLPop:
		ev = "lpop"
	case command.OpBRPop:
		ev = "rpop"
	case command.OpBZPopMin:
		class, ev = nfZSet, "zpopmin"
	case command.OpBZPopMax:
		class, ev = nfZSet, "zpopmax"
	default:
		return
	}
	e.notifyKey(class, ev, key, db)
	if !st.Exists(key) {
		e.notifyKey(nfGeneric, "del", key, db)
	}
}

func seenBefore(keys [][]byte, i int) bool {
	for j := 0; j < i; j++ {
		if string(keys[j]) == string(keys[i]) {
			return true
		}
	}
	return false
}

func pick(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}

// zaddIncr reports whether ZADD's options (before its score-member pairs)
// include INCR.
func zaddIncr(args [][]byte) bool {
	for _, a := range args {
		switch {
		case command.EqualFold(a, "incr"):
			return true
		case command.EqualFold(a, "nx"), command.EqualFold(a, "xx"), command.EqualFold(a, "ch"),
			command.EqualFold(a, "gt"), command.EqualFold(a, "lt"):
		default:
			return false
		}
	}
	return false
}
