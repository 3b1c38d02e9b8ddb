package engine

import (
	"errors"
	"strconv"
	"strings"

	"github.com/goblin-kv/goblin/acl"
	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/internal/glob"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/redisconf"
)

// Pub/Sub as Redis 7.0 has it: channels, glob patterns and shard
// channels, each a table the loop goroutine owns. A subscriber receives
// its messages through its transport's Conn.Push (so only socket clients
// can subscribe); a subscriber that is also the client being served (a
// RESP3 client publishing to itself) gets them in its own reply stream,
// before the reply, through pubsubState.out. The SUBSCRIBE family answers
// with one array (RESP2) or push (RESP3) per channel, written into out as
// well: such a command has no Reply of its own.
//
// PUBLISH formats each message once, in a buffer the engine keeps, and
// hands the same bytes to every receiver (RESP2's '*' and RESP3's '>' are
// the only difference, its first byte), so a PUBLISH allocates nothing
// whatever its receivers. A receiver whose queued output passes
// client-output-buffer-limit's pubsub class is disconnected after the
// fan-out, as Redis does.

// pubsubState is the engine's Pub/Sub tables.
type pubsubState struct {
	channels map[string]*subscribers // SUBSCRIBE's channels
	shard    map[string]*subscribers // SSUBSCRIBE's shard channels
	patterns []*subscribers          // PSUBSCRIBE's patterns, in order of first subscription
	byPat    map[string]*subscribers // patterns by text

	out  []byte // what the session being served receives before its reply (see above)
	only bool   // out is the whole answer: the command has no Reply
	// after, when not 0, is 1 + where in out the messages that go after
	// the reply start (keyspace notifications Redis sends once the
	// command has answered; notify.go).
	after int
	msg   []byte     // the message being published, formatted
	cut   []*Session // subscribers to disconnect once the fan-out is done (cutSlow)

	// client-output-buffer-limit's pubsub class: bytes, bytes, seconds.
	hard, soft, softSecs int64
	// The normal class, kept for CONFIG GET (goblin bounds every socket
	// client by --client-output-limit instead), and the replica class,
	// which replicaOverLimit applies to a replica's stream (cmd_repl.go).
	normal, replica [3]int64
	cuts            int64 // subscribers disconnected by the limit
}

// subscribers are one channel's or one pattern's subscribers, in order of
// subscription.
type subscribers struct {
	name []byte
	subs []*Session
}

// sessionSubs is one session's subscriptions (nil when it never
// subscribed). Channels are kept in order of subscription so that
// UNSUBSCRIBE without arguments answers in a repeatable order.
type sessionSubs struct {
	channels, shard orderedSet
	patterns        orderedSet
	// softSince is when the session's output first passed the soft limit
	// (unix ms, 0 when under it).
	softSince int64
}

// orderedSet is a set of names that remembers their order.
type orderedSet struct {
	names []string
	index map[string]struct{}
}

func (o *orderedSet) has(name []byte) bool { _, ok := o.index[string(name)]; return ok }

func (o *orderedSet) add(name string) {
	if o.index == nil {
		o.index = map[string]struct{}{}
	}
	o.index[name] = struct{}{}
	o.names = append(o.names, name)
}

func (o *orderedSet) remove(name []byte) {
	delete(o.index, string(name))
	for i, n := range o.names {
		if n == string(name) {
			o.names = append(o.names[:i], o.names[i+1:]...)
			return
		}
	}
}

// Default client-output-buffer-limit pubsub (Redis's).
const (
	defaultPubSubHard     = 32 << 20
	defaultPubSubSoft     = 8 << 20
	defaultPubSubSoftSecs = 60
)

func (p *pubsubState) init() {
	p.channels = map[string]*subscribers{}
	p.shard = map[string]*subscribers{}
	p.byPat = map[string]*subscribers{}
	p.hard, p.soft, p.softSecs = defaultPubSubHard, defaultPubSubSoft, defaultPubSubSoftSecs
	p.replica = [3]int64{DefaultReplicaHardLimit, DefaultReplicaSoftLimit, DefaultReplicaSoftSecs}
}

// subCount is the count a SUBSCRIBE or PSUBSCRIBE confirmation carries:
// the session's channels and patterns (Redis's clientSubscriptionsCount).
func (s *Session) subCount() int64 {
	if s.sub == nil {
		return 0
	}
	return int64(len(s.sub.channels.names) + len(s.sub.patterns.names))
}

// shardCount is SSUBSCRIBE's count: the session's shard channels.
func (s *Session) shardCount() int64 {
	if s.sub == nil {
		return 0
	}
	return int64(len(s.sub.shard.names))
}

// notify appends one confirmation (kind, channel or null, count) for s to
// the answer being built.
func (e *Engine) notify(s *Session, kind string, name []byte, null bool, count int64) {
	b := e.ps.out
	if s.resp3 {
		b = resp.AppendPush(b, 3)
	} else {
		b = resp.AppendArray(b, 3)
	}
	b = resp.AppendBulkString(b, kind)
	switch {
	case !null:
		b = resp.AppendBulk(b, name)
	case s.resp3:
		b = resp.AppendNull3(b)
	default:
		b = resp.AppendNull(b)
	}
	e.ps.out = resp.AppendInt(b, count)
	e.ps.only = true
}

// canSubscribe refuses a subscription that cannot work: a transport that
// cannot send out of turn, or inside EXEC.
func (e *Engine) canSubscribe(s *Session, r *command.Request) bool {
	switch {
	case e.inExec && r.Op == command.OpSSubscribe:
		// Redis 7.0 lets SUBSCRIBE and PSUBSCRIBE run in a transaction
		// (their confirmations inside EXEC's reply), not SSUBSCRIBE.
		e.errText(command.Err, "ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client")
		return false
	case e.inExec && s.Protocol != proto.RESP:
		e.errText(command.Err, "ERR "+strings.ToUpper(command.Name(r.Op))+" inside MULTI needs RESP")
		return false
	case s.conn.Push == nil:
		e.errText(command.Err, "ERR "+strings.ToUpper(command.Name(r.Op))+" needs a socket connection (this transport cannot send to a client out of turn)")
		return false
	}
	if s.sub == nil {
		s.sub = &sessionSubs{}
	}
	return true
}

func (e *Engine) subscribe(s *Session, r *command.Request) {
	if !e.canSubscribe(s, r) {
		return
	}
	for _, ch := range r.Args {
		if !s.sub.channels.has(ch) {
			name := string(ch)
			s.sub.channels.add(name)
			e.ps.join(e.ps.channels, name, s)
		}
		e.notify(s, "subscribe", ch, false, s.subCount())
	}
	s.pubsub = true
	s.recold()
}

func (e *Engine) ssubscribe(s *Session, r *command.Request) {
	if !e.canSubscribe(s, r) {
		return
	}
	one := func(ch []byte) {
		if !s.sub.shard.has(ch) {
			name := string(ch)
			s.sub.shard.add(name)
			e.ps.join(e.ps.shard, name, s)
		}
		e.notify(s, "ssubscribe", ch, false, s.shardCount())
	}
	one(r.Key)
	for _, ch := range r.Args {
		one(ch)
	}
	s.pubsub = true
	s.recold()
}

func (e *Engine) psubscribe(s *Session, r *command.Request) {
	if !e.canSubscribe(s, r) {
		return
	}
	for _, p := range r.Args {
		if !s.sub.patterns.has(p) {
			name := string(p)
			s.sub.patterns.add(name)
			ps := e.ps.byPat[name]
			if ps == nil {
				ps = &subscribers{name: []byte(name)}
				e.ps.byPat[name] = ps
				e.ps.patterns = append(e.ps.patterns, ps)
			}
			ps.subs = append(ps.subs, s)
		}
		e.notify(s, "psubscribe", p, false, s.subCount())
	}
	s.pubsub = true
	s.recold()
}

// join adds s to the subscribers of name in table t.
func (p *pubsubState) join(t map[string]*subscribers, name string, s *Session) {
	c := t[name]
	if c == nil {
		c = &subscribers{name: []byte(name)}
		t[name] = c
	}
	c.subs = append(c.subs, s)
}

// leave takes s off the subscribers of name in table t, dropping the
// entry once nobody is left.
func (p *pubsubState) leave(t map[string]*subscribers, name []byte, s *Session) {
	c := t[string(name)]
	if c == nil {
		return
	}
	c.subs = removeSession(c.subs, s)
	if len(c.subs) == 0 {
		delete(t, string(name))
	}
}

func removeSession(list []*Session, s *Session) []*Session {
	for i, x := range list {
		if x == s {
			copy(list[i:], list[i+1:])
			list[len(list)-1] = nil
			return list[:len(list)-1]
		}
	}
	return list
}

// leavePattern takes s off pattern p's subscribers.
func (p *pubsubState) leavePattern(pat []byte, s *Session) {
	ps := p.byPat[string(pat)]
	if ps == nil {
		return
	}
	ps.subs = removeSession(ps.subs, s)
	if len(ps.subs) == 0 {
		delete(p.byPat, string(pat))
		for i, x := range p.patterns {
			if x == ps {
				p.patterns = append(p.patterns[:i], p.patterns[i+1:]...)
				break
			}
		}
	}
}

func (e *Engine) unsubscribe(s *Session, r *command.Request) {
	if e.inExec && s.Protocol != proto.RESP {
		e.canSubscribe(s, r)
		return
	}
	e.unsubscribeFrom(s, r.Args, false, true)
}

func (e *Engine) punsubscribe(s *Session, r *command.Request) {
	if e.inExec && s.Protocol != proto.RESP {
		e.canSubscribe(s, r)
		return
	}
	e.unsubscribePatterns(s, r.Args, true)
}

func (e *Engine) sunsubscribe(s *Session, r *command.Request) {
	if e.inExec && s.Protocol != proto.RESP {
		e.canSubscribe(s, r)
		return
	}
	var names [][]byte
	if r.Key != nil {
		names = append(append(e.keyList[:0], r.Key), r.Args...)
		e.keyList = names[:0]
	}
	e.unsubscribeFrom(s, names, true, true)
}

// unsubscribeFrom takes s off the channels (shard channels) named, or
// off all of them when none is named, confirming each when reply is set.
func (e *Engine) unsubscribeFrom(s *Session, names [][]byte, shard, reply bool) {
	kind, table := "unsubscribe", e.ps.channels
	if shard {
		kind, table = "sunsubscribe", e.ps.shard
	}
	var set *orderedSet
	if s.sub != nil {
		set = &s.sub.channels
		if shard {
			set = &s.sub.shard
		}
	}
	count := func() int64 {
		if shard {
			return s.shardCount()
		}
		return s.subCount()
	}
	if len(names) == 0 {
		if set == nil || len(set.names) == 0 {
			if reply {
				e.notify(s, kind, nil, true, count())
			}
		} else {
			for len(set.names) > 0 {
				name := []byte(set.names[0])
				set.remove(name)
				e.ps.leave(table, name, s)
				if reply {
					e.notify(s, kind, name, false, count())
				}
			}
		}
	}
	for _, name := range names {
		if set != nil && set.has(name) {
			set.remove(name)
			e.ps.leave(table, name, s)
		}
		if reply {
			e.notify(s, kind, name, false, count())
		}
	}
	e.endSubscribed(s)
}

// unsubscribePatterns is unsubscribeFrom for patterns.
func (e *Engine) unsubscribePatterns(s *Session, pats [][]byte, reply bool) {
	var set *orderedSet
	if s.sub != nil {
		set = &s.sub.patterns
	}
	if len(pats) == 0 {
		if set == nil || len(set.names) == 0 {
			if reply {
				e.notify(s, "punsubscribe", nil, true, s.subCount())
			}
		} else {
			for len(set.names) > 0 {
				p := []byte(set.names[0])
				set.remove(p)
				e.ps.leavePattern(p, s)
				if reply {
					e.notify(s, "punsubscribe", p, false, s.subCount())
				}
			}
		}
	}
	for _, p := range pats {
		if set != nil && set.has(p) {
			set.remove(p)
			e.ps.leavePattern(p, s)
		}
		if reply {
			e.notify(s, "punsubscribe", p, false, s.subCount())
		}
	}
	e.endSubscribed(s)
}

// endSubscribed leaves the subscribed context once s has no
// subscription left.
func (e *Engine) endSubscribed(s *Session) {
	if s.subCount()+s.shardCount() == 0 {
		s.pubsub = false
		s.recold()
	}
}

// dropSubscriptions takes s off every channel, pattern and shard channel,
// without confirmations (RESET, Close).
func (e *Engine) dropSubscriptions(s *Session) {
	if s.sub == nil {
		return
	}
	e.unsubscribeFrom(s, nil, false, false)
	e.unsubscribeFrom(s, nil, true, false)
	e.unsubscribePatterns(s, nil, false)
	s.sub, s.pubsub = nil, false
	s.recold()
}

func (e *Engine) publish(s *Session, r *command.Request) {
	n := e.deliver(s, e.ps.channels[string(r.Key)], "message", r.Key, r.Value)
	for _, p := range e.ps.patterns {
		if glob.Match(p.name, r.Key) {
			n += e.deliverPattern(s, p, r.Key, r.Value)
		}
	}
	e.cutSlow()
	if e.cl != nil && e.cl.bus != nil {
		e.cl.bus.Publish(r.Key, r.Value) // every node's subscribers (cmd_clusterbus.go)
	}
	e.integer(n)
}

func (e *Engine) spublish(s *Session, r *command.Request) {
	n := e.deliver(s, e.ps.shard[string(r.Key)], "smessage", r.Key, r.Value)
	e.cutSlow()
	if e.cl != nil && e.cl.bus != nil {
		e.cl.bus.PublishShard(r.Key, r.Value) // the shard's other nodes
	}
	e.integer(n)
}

// deliver sends [kind, channel, message] to c's subscribers and returns
// how many there were.
func (e *Engine) deliver(from *Session, c *subscribers, kind string, channel, msg []byte) int64 {
	if c == nil {
		return 0
	}
	b := resp.AppendArray(e.ps.msg[:0], 3)
	b = resp.AppendBulkString(b, kind)
	b = resp.AppendBulk(b, channel)
	b = resp.AppendBulk(b, msg)
	e.ps.msg = b
	for _, sub := range c.subs {
		e.send(from, sub, b)
	}
	return int64(len(c.subs))
}

// deliverPattern sends [pmessage, pattern, channel, message] to p's
// subscribers.
func (e *Engine) deliverPattern(from *Session, p *subscribers, channel, msg []byte) int64 {
	b := resp.AppendArray(e.ps.msg[:0], 4)
	b = resp.AppendBulkString(b, "pmessage")
	b = resp.AppendBulk(b, p.name)
	b = resp.AppendBulk(b, channel)
	b = resp.AppendBulk(b, msg)
	e.ps.msg = b
	for _, sub := range p.subs {
		e.send(from, sub, b)
	}
	return int64(len(p.subs))
}

// send hands msg, a RESP2 array, to sub: as a push for a RESP3 client,
// into the reply stream when sub is the client being served. A
// subscriber whose transport refuses it, or whose output passes the
// pubsub limit, is listed to be disconnected.
func (e *Engine) send(from, sub *Session, msg []byte) {
	if sub.killed {
		return
	}
	msg[0] = '*'
	if sub.resp3 {
		msg[0] = '>'
	}
	if sub == from {
		e.ps.out = append(e.ps.out, msg...)
		return
	}
	if !sub.conn.Push(msg) || e.subscriberOverLimit(sub) {
		sub.killed = true
		e.ps.cut = append(e.ps.cut, sub)
	}
}

// subscriberOverLimit applies client-output-buffer-limit pubsub to sub's queued
// output, as Redis's checkClientOutputBufferLimits does: over the hard
// limit at once, over the soft limit once it has stayed over it for more
// than the soft seconds.
func (e *Engine) subscriberOverLimit(sub *Session) bool {
	if sub.conn.Queued == nil {
		return false
	}
	q := int64(sub.conn.Queued())
	p := &e.ps
	if p.hard > 0 && q >= p.hard {
		return true
	}
	if p.soft == 0 || q < p.soft {
		sub.sub.softSince = 0
		return false
	}
	now := e.clock.NowMillis()
	if sub.sub.softSince == 0 {
		sub.sub.softSince = now
		return false
	}
	return (now-sub.sub.softSince)/1000 > p.softSecs
}

// cutSlow disconnects the subscribers a fan-out found over the limit:
// gone for the engine at once, their connections closed by their
// transports.
func (e *Engine) cutSlow() {
	if len(e.ps.cut) == 0 {
		return
	}
	for i, c := range e.ps.cut {
		e.ps.cut[i] = nil
		e.ps.cuts++
		if e.o.PubSubLog != nil {
			q := -1
			if c.conn.Queued != nil {
				q = c.conn.Queued()
			}
			e.o.PubSubLog.Warn("client disconnected: a subscriber over client-output-buffer-limit pubsub",
				"id", c.ID, "addr", c.conn.Addr, "queued", q, "hard", e.ps.hard, "soft", e.ps.soft, "soft_seconds", e.ps.softSecs)
		}
		c.quit = true
		if c.conn.Kill != nil {
			c.conn.Kill()
		}
		e.Close(c)
	}
	e.ps.cut = e.ps.cut[:0]
}

// subscribedOnly is Redis's rule for a RESP2 client with subscriptions:
// only the SUBSCRIBE family, PING, QUIT and RESET may run; PING answers
// ["pong", message]. It reports whether it answered r.
func (e *Engine) subscribedOnly(s *Session, r *command.Request) bool {
	if e.inExec && r.Op != command.OpPing {
		return false // EXEC runs what was queued before the client subscribed, as Redis does
	}
	switch r.Op {
	case command.OpSubscribe, command.OpSSubscribe, command.OpPSubscribe, command.OpUnsubscribe,
		command.OpSUnsubscribe, command.OpPUnsubscribe, command.OpQuit, command.OpReset:
		return false
	case command.OpPing:
		if len(r.Args) > 1 {
			return false
		}
		e.begin(command.Array)
		e.addBulkStr("pong")
		if len(r.Args) == 1 {
			e.addBulk(r.Args[0])
		} else {
			e.addBulkStr("")
		}
		e.end()
		return true
	}
	e.fail(command.Err, "ERR Can't execute '", []byte(command.Name(r.Op)),
		"': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
	return true
}

// pubsubChannels answers PUBSUB CHANNELS and SHARDCHANNELS [pattern].
func (e *Engine) pubsubChannels(_ *Session, r *command.Request) {
	t := e.ps.channels
	if r.Op == command.OpPubSubShardChannels {
		t = e.ps.shard
	}
	var pat []byte
	if len(r.Args) > 0 {
		pat = r.Args[0]
	}
	e.begin(command.Array)
	for name, c := range t {
		if pat == nil || glob.Match(pat, c.name) {
			e.addCopy(command.Bulk, []byte(name))
		}
	}
	e.end()
}

// pubsubNumSub answers PUBSUB NUMSUB and SHARDNUMSUB [channel...].
func (e *Engine) pubsubNumSub(_ *Session, r *command.Request) {
	t := e.ps.channels
	if r.Op == command.OpPubSubShardNumSub {
		t = e.ps.shard
	}
	e.begin(command.Array)
	for _, ch := range r.Args {
		n := 0
		if c := t[string(ch)]; c != nil {
			n = len(c.subs)
		}
		e.addBulk(ch)
		e.addInt(int64(n))
	}
	e.end()
}

func (e *Engine) pubsubNumPat(*Session, *command.Request) { e.integer(int64(len(e.ps.patterns))) }

// pubsubChannelsOf lists a request's channels for the ACL check:
// PUBLISH's and SUBSCRIBE's channels, PSUBSCRIBE's patterns.
func (e *Engine) pubsubChannelsOf(r *command.Request) []acl.Channel {
	chans := e.aclChans[:0]
	switch r.Op {
	case command.OpPublish, command.OpSPublish:
		chans = append(chans, acl.Channel{Name: r.Key})
	case command.OpSSubscribe:
		chans = append(chans, acl.Channel{Name: r.Key})
		for _, c := range r.Args {
			chans = append(chans, acl.Channel{Name: c})
		}
	case command.OpSubscribe, command.OpPSubscribe:
		for _, c := range r.Args {
			chans = append(chans, acl.Channel{Name: c, Pattern: r.Op == command.OpPSubscribe})
		}
	}
	e.aclChans = chans
	return chans
}

// CONFIG SET client-output-buffer-limit's errors, Redis's texts.
var (
	//lint:ignore ST1005 Redis's exact text, capital and period included
	errBufferLimitArgs = errors.New("Wrong number of arguments in buffer limit configuration.")
	//lint:ignore ST1005 Redis's exact text, capital and period included
	errBufferLimitClass = errors.New("Invalid client class specified in buffer limit configuration.")
	//lint:ignore ST1005 Redis's exact text, capital and period included
	errBufferLimitValue = errors.New("Error in hard, soft or soft_seconds setting in buffer limit configuration.")
)

// outputLimitParam is CONFIG's client-output-buffer-limit: Redis's three
// classes, "class hard soft seconds" each; SET takes any of them, all or
// none. The pubsub class bounds subscribers; goblin bounds every socket
// client's replies by --client-output-limit, so the normal and replica
// classes are kept for CONFIG GET only.
func (e *Engine) outputLimitParam() Param {
	return Param{Name: "client-output-buffer-limit",
		Get: func() string {
			p := &e.ps
			var b []byte
			for _, c := range []struct {
				name string
				v    [3]int64
			}{{"normal", p.normal}, {"slave", p.replica}, {"pubsub", [3]int64{p.hard, p.soft, p.softSecs}}} {
				if b != nil {
					b = append(b, ' ')
				}
				b = append(b, c.name...)
				for _, n := range c.v {
					b = append(b, ' ')
					b = strconv.AppendInt(b, n, 10)
				}
			}
			return string(b)
		},
		Set: func(v string) error {
			f := strings.Fields(v)
			if len(f)%4 != 0 {
				return errBufferLimitArgs
			}
			normal, replica, pub := e.ps.normal, e.ps.replica, [3]int64{e.ps.hard, e.ps.soft, e.ps.softSecs}
			for i := 0; i < len(f); i += 4 {
				var dst *[3]int64
				switch strings.ToLower(f[i]) {
				case "normal":
					dst = &normal
				case "slave", "replica":
					dst = &replica
				case "pubsub":
					dst = &pub
				default:
					return errBufferLimitClass
				}
				hard, err1 := redisconf.ParseMemory(f[i+1])
				soft, err2 := redisconf.ParseMemory(f[i+2])
				secs, err3 := strconv.ParseInt(f[i+3], 10, 64)
				if err1 != nil || err2 != nil || err3 != nil || secs < 0 || hard > 1<<62 || soft > 1<<62 {
					return errBufferLimitValue
				}
				*dst = [3]int64{int64(hard), int64(soft), secs}
			}
			e.ps.normal, e.ps.replica = normal, replica
			e.ps.hard, e.ps.soft, e.ps.softSecs = pub[0], pub[1], pub[2]
			return nil
		}}
}
