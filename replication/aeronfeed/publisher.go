package aeronfeed

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/transport"
)

// DefaultStreamID is the Aeron stream id of the replication stream, and
// DefaultStatusStreamID the replicas' status stream's.
const (
	DefaultStreamID       = 1035
	DefaultStatusStreamID = 1036
)

// Defaults of PublisherOptions.
const (
	DefaultMaxPending = 64 << 20
	DefaultHeartbeat  = 100 * time.Millisecond
	// StatusTimeout is how long a replica stays listed after its last
	// status.
	StatusTimeout = 10 * time.Second
)

// ErrOptions is wrapped by every configuration error.
var ErrOptions = errors.New("aeronfeed: invalid options")

// PublisherOptions configure a Publisher. Channel and Position are
// required.
type PublisherOptions struct {
	// Channel is the Aeron channel the stream is published on: multicast
	// (aeron:udp?endpoint=239.1.2.3:40456|interface=10.0.0.1) or
	// multi-destination (aeron:udp?control-mode=dynamic|control=10.0.0.1:40457).
	Channel string
	// StreamID is the stream id (default DefaultStreamID).
	StreamID int32
	// StatusChannel, when set, is subscribed for the replicas' status
	// messages (aeron:udp?endpoint=10.0.0.1:40458); StatusStreamID its
	// stream id (default DefaultStatusStreamID).
	StatusChannel  string
	StatusStreamID int32
	// MaxPending bounds the stream bytes held while the publication is
	// back-pressured (default 64 MiB); past it they are dropped and the
	// replicas resynchronise.
	MaxPending int
	// Heartbeat is how often a quiet stream sends its offset (default
	// 100 ms).
	Heartbeat time.Duration
	// Position returns the stream's replication id and offset now
	// (engine.Engine.Replication()), for heartbeats. Loop goroutine.
	Position func() (id string, offset int64)
	// Standby, when set, reports whether the node follows a primary
	// (engine.Engine.IsReplica): the publication stands by while it does
	// (SetStandby), read before each feed and poll. Loop goroutine.
	Standby func() bool
	// Run, when set with a StatusChannel, runs the writes replicas
	// forward over Aeron (on StatusChannel, stream StreamID+2), each
	// exactly once, and the publication answers them (forwarded.go).
	Run RunFunc
	// Forget, when set, is called with each replica (sender) the inbox
	// of forwarded writes forgets (Inbox.OnForget): what Run keeps for it
	// can go. Loop goroutine.
	Forget func(sender uint64)
	// Logger receives the publication's events (default slog.Default()).
	Logger *slog.Logger
}

// PublisherStats are the publication's counters. Loop goroutine.
type PublisherStats struct {
	Offset          int64 // the stream offset offered so far
	OfferedBytes    int64 // stream bytes offered
	Frames          int64 // data frames offered
	Heartbeats      int64
	BackPressured   int64 // offers refused by flow control (retried)
	Pending         int64 // bytes waiting
	DroppedBytes    int64 // pending bytes dropped past MaxPending
	Drops           int64 // times they were
	UnconnectedDrop int64 // bytes not offered: no replica was connected
	Replicas        int   // replicas with a recent status
	Answers         int64 // forwarded writes' answers offered
	Inbox           InboxStats
}

// AeronReplica is one replica as its status reports it.
type AeronReplica struct {
	Name     string
	IP       string // its address on the status channel
	Port     int    // its listening port
	Offset   int64  // applied
	LastSeen int64  // the loop's clock (ns) at its last status
}

// Publisher is the primary side: an engine.StreamTap whose Poll (a
// transport.Server the loop polls) offers the stream on the channel.
// Every method runs on the loop goroutine.
type Publisher struct {
	o      PublisherOptions
	log    *slog.Logger
	media  *Media
	pub    *aeron.ExclusivePublication
	status *aeron.Subscription

	pend    []byte // records: 4-byte length, then a frame
	sent    int    // pend[:sent] offered
	open    int    // the last record, which may still grow; -1: none
	openID  string
	openEnd int64
	hb      []byte
	lastOut int64 // the loop's clock at the last offer
	now     int64
	broken  bool
	maxRec  int // the largest frame: HeaderLen+MaxPayload, or less for a short term
	st      PublisherStats

	replicas []AeronReplica
	smsg     []byte
	standby  bool // the node follows a primary: nothing is published (SetStandby)

	requests *aeron.Subscription // forwarded writes (nil: not taken)
	inbox    *Inbox
	rmsg     []byte
}

var _ transport.Server = (*Publisher)(nil)

// NewPublisher starts a private media driver and adds the publication
// (and the status subscription).
func NewPublisher(o PublisherOptions) (*Publisher, error) {
	if o.Channel == "" || o.Position == nil {
		return nil, fmt.Errorf("%w: a channel and a position are required", ErrOptions)
	}
	if o.StreamID == 0 {
		o.StreamID = DefaultStreamID
	}
	if o.StatusStreamID == 0 {
		o.StatusStreamID = DefaultStatusStreamID
	}
	if o.MaxPending <= 0 {
		o.MaxPending = DefaultMaxPending
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = DefaultHeartbeat
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	m, err := StartMedia(o.Logger)
	if err != nil {
		return nil, err
	}
	p := &Publisher{o: o, log: o.Logger, media: m, open: -1}
	p.pub, err = m.Client.AddExclusivePublication(o.Channel, o.StreamID)
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("aeronfeed: publish the replication stream on %s: %w", o.Channel, err)
	}
	p.maxRec = min(HeaderLen+MaxPayload, p.pub.MaxMessageLength())
	if o.StatusChannel != "" {
		p.status, err = m.Client.AddSubscription(o.StatusChannel, o.StatusStreamID)
		if err != nil {
			m.Close()
			return nil, fmt.Errorf("aeronfeed: subscribe to the replicas' status on %s: %w", o.StatusChannel, err)
		}
		if o.Run != nil {
			p.requests, err = m.Client.AddSubscription(o.StatusChannel, o.StreamID+ForwardStreamOffset)
			if err != nil {
				m.Close()
				return nil, fmt.Errorf("aeronfeed: subscribe to the replicas' forwarded writes on %s: %w", o.StatusChannel, err)
			}
			p.inbox = NewInbox(o.Run, func() int64 { _, off := o.Position(); return off }, p.appendAnswer)
			if o.Forget != nil {
				p.inbox.OnForget(o.Forget)
			}
		}
	}
	p.log.Info("replication stream published over Aeron", "channel", o.Channel, "stream", o.StreamID,
		"status_channel", o.StatusChannel, "aeron_dir", m.Driver.Dir())
	return p, nil
}

// SetStandby stops publishing while on (the node follows a primary,
// whose stream it would otherwise publish again on the same channel) and
// starts again when off (a promotion: the node's own stream, under its new
// replication id). Pending bytes are dropped when it goes on standby. Loop
// goroutine.
func (p *Publisher) SetStandby(on bool) {
	if p.standby == on {
		return
	}
	p.standby = on
	p.reset()
	p.lastOut = 0
	if on {
		p.log.Info("aeron replication: following a primary; the publication stands by", "channel", p.o.Channel)
	} else {
		p.log.Info("aeron replication: primary; publishing the stream", "channel", p.o.Channel)
	}
}

// StreamFeed implements engine.StreamTap: it appends b to the pending
// frames, never waiting.
func (p *Publisher) StreamFeed(id string, offset int64, b []byte) {
	if p.o.Standby != nil {
		p.SetStandby(p.o.Standby())
	}
	if p.standby {
		return
	}
	for len(b) > 0 {
		if p.open < 0 || p.openID != id || p.openEnd != offset || len(p.pend)-p.open-4 >= p.maxRec {
			p.open = len(p.pend)
			p.pend = append(p.pend, 0, 0, 0, 0)
			p.pend = AppendHeader(p.pend, KindData, id, offset)
			p.openID, p.openEnd = id, offset
		}
		n := min(len(b), p.maxRec-(len(p.pend)-p.open-4))
		p.pend = append(p.pend, b[:n]...)
		binary.LittleEndian.PutUint32(p.pend[p.open:], uint32(len(p.pend)-p.open-4))
		p.openEnd += int64(n)
		offset += int64(n)
		b = b[n:]
	}
	if len(p.pend)-p.sent > p.o.MaxPending {
		p.drop("the publication is back-pressured past max pending")
	}
}

// drop forgets every pending byte: the replicas will see a gap.
func (p *Publisher) drop(why string) {
	n := int64(len(p.pend) - p.sent)
	p.st.DroppedBytes += n
	p.st.Drops++
	p.log.Warn("aeron replication: pending stream bytes dropped; the replicas will resynchronise", "bytes", n, "why", why)
	p.reset()
}

func (p *Publisher) reset() {
	p.pend, p.sent, p.open = p.pend[:0], 0, -1
	if cap(p.pend) > 4<<20 {
		p.pend = nil
	}
}

// Poll implements transport.Server: it offers the pending frames until
// one is back-pressured, a heartbeat when the stream is quiet, and reads
// the replicas' status. After it offered or consumed anything it wakes
// the media driver (Driver.Wake): a parked driver sends what was offered,
// and answers what was consumed with a status message, now rather than
// when its park ends — which, the media driver being told so
// (driver.Options.WakeOnOffer, StartMedia), may be up to 8 ms once quiet.
func (p *Publisher) Poll(now int64) int {
	work := p.poll(now)
	if work > 0 {
		p.media.Driver.Wake()
	}
	return work
}

func (p *Publisher) poll(now int64) int {
	p.now = now
	if p.o.Standby != nil {
		p.SetStandby(p.o.Standby())
	}
	work := 0
	if p.status != nil {
		work += p.pollStatus(now)
	}
	if p.requests != nil {
		work += p.pollRequests(now)
	}
	if p.broken || p.standby {
		p.reset()
		return work
	}
	for p.sent < len(p.pend) {
		n := int(binary.LittleEndian.Uint32(p.pend[p.sent:]))
		rec := p.pend[p.sent+4 : p.sent+4+n]
		r := p.pub.Offer(rec)
		if r == aeron.AdminAction {
			r = p.pub.Offer(rec)
		}
		switch {
		case rec[kindOff] == KindAnswer && (r > 0 || r == aeron.NotConnected):
			p.st.Answers++
			if p.open == p.sent {
				p.open = -1
			}
			p.sent += 4 + n
			work++
		case r > 0 || r == aeron.NotConnected:
			pay := int64(n - HeaderLen)
			if r > 0 {
				p.st.OfferedBytes += pay
				p.st.Frames++
			} else {
				p.st.UnconnectedDrop += pay
			}
			p.st.Offset = int64(binary.LittleEndian.Uint64(rec[offsetOff:])) + pay
			if p.open == p.sent {
				p.open = -1
			}
			p.sent += 4 + n
			p.lastOut = now
			work++
		case r == aeron.BackPressured || r == aeron.AdminAction:
			p.st.BackPressured++
			p.compact()
			return work
		default:
			p.log.Error("aeron replication: the publication failed; the stream is no longer published", "status", aeron.StatusString(r))
			p.broken = true
			p.reset()
			return work + 1
		}
	}
	p.reset()
	if now-p.lastOut >= int64(p.o.Heartbeat) {
		id, off := p.o.Position()
		p.hb = AppendHeader(p.hb[:0], KindHeartbeat, id, off)
		if r := p.pub.Offer(p.hb); r > 0 || r == aeron.NotConnected {
			p.media.Driver.Wake() // not work for the loop, but the driver's to send
			p.st.Heartbeats++
			p.st.Offset = off
			p.lastOut = now
		}
	}
	return work
}

// compact moves the records not yet offered to the front once the
// offered ones are the larger part.
func (p *Publisher) compact() {
	if p.sent < 64<<10 || p.sent < len(p.pend)/2 {
		return
	}
	n := copy(p.pend, p.pend[p.sent:])
	if p.open >= 0 {
		p.open -= p.sent
	}
	p.pend, p.sent = p.pend[:n], 0
}

func (p *Publisher) pollStatus(now int64) int {
	work := 0
	for i := 0; i < 16; i++ {
		msg, img, ok := p.status.NextMessage(p.smsg[:0])
		if !ok {
			break
		}
		p.smsg = msg[:0]
		work++
		var s Status
		if ParseStatus(msg, &s) != nil {
			continue
		}
		p.noteStatus(&s, img.SourceIdentity(), now)
	}
	// Forget replicas silent for StatusTimeout.
	for i := len(p.replicas) - 1; i >= 0; i-- {
		if now-p.replicas[i].LastSeen > int64(StatusTimeout) {
			p.replicas = append(p.replicas[:i], p.replicas[i+1:]...)
		}
	}
	return work
}

func (p *Publisher) noteStatus(s *Status, source string, now int64) {
	for i := range p.replicas {
		r := &p.replicas[i]
		if r.Name == string(s.Name) { // no allocation: a comparison
			r.Offset, r.Port, r.LastSeen = s.Offset, s.Port, now
			return
		}
	}
	ip := source
	if j := lastColon(source); j > 0 {
		ip = source[:j]
	}
	p.replicas = append(p.replicas, AeronReplica{Name: string(s.Name), IP: ip, Port: s.Port, Offset: s.Offset, LastSeen: now})
}

func lastColon(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ':' {
			return i
		}
	}
	return -1
}

// Replicas appends the replicas with a recent status to dst.
func (p *Publisher) Replicas(dst []AeronReplica) []AeronReplica { return append(dst, p.replicas...) }

// Stats fills st.
func (p *Publisher) Stats(st *PublisherStats) {
	*st = p.st
	st.Pending = int64(len(p.pend) - p.sent)
	st.Replicas = len(p.replicas)
	if p.inbox != nil {
		p.inbox.Stats(&st.Inbox)
	}
}

// AppendInfo appends INFO replication's Aeron lines (engine's tapInfo):
// the channel, the offset published, the flow-control counters and one
// aeron_replica<N> line per replica with a recent status.
func (p *Publisher) AppendInfo(b []byte) []byte {
	line := func(k string, v string) { b = append(append(append(append(b, k...), ':'), v...), "\r\n"...) }
	num := func(k string, v int64) { line(k, strconv.FormatInt(v, 10)) }
	_, cur := p.o.Position()
	line("aeron_channel", p.o.Channel)
	num("aeron_stream_id", int64(p.o.StreamID))
	num("aeron_published_offset", p.st.Offset)
	num("aeron_pending_bytes", int64(len(p.pend)-p.sent))
	num("aeron_back_pressured", p.st.BackPressured)
	num("aeron_dropped_bytes", p.st.DroppedBytes)
	num("aeron_connected_replicas", int64(len(p.replicas)))
	for i, r := range p.replicas {
		b = append(b, "aeron_replica"...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, ":name="...)
		b = append(b, r.Name...)
		b = append(b, ",ip="...)
		b = append(b, r.IP...)
		b = append(b, ",port="...)
		b = strconv.AppendInt(b, int64(r.Port), 10)
		b = append(b, ",offset="...)
		b = strconv.AppendInt(b, r.Offset, 10)
		b = append(b, ",lag_bytes="...)
		b = strconv.AppendInt(b, max(cur-r.Offset, 0), 10)
		b = append(b, ",lag="...)
		b = strconv.AppendInt(b, (p.now-r.LastSeen)/int64(time.Second), 10)
		b = append(b, "\r\n"...)
	}
	return b
}

// ParksRaw implements server.RawParker: the Publisher's media driver runs
// on a goroutine of its own that parks through raw system calls
// (driver.Start), so the store loop parks raw too (docs/idle.md).
func (p *Publisher) ParksRaw() bool { return true }

// Name implements transport.Server.
func (p *Publisher) Name() string { return "replication/aeron" }

// Clients implements transport.Server: the replicas with a recent status.
func (p *Publisher) Clients() int { return len(p.replicas) }

// UpdateStats implements transport.Server.
func (p *Publisher) UpdateStats(st *transport.Stats) { st.BytesOut += p.st.OfferedBytes }

// Close implements transport.Server.
func (p *Publisher) Close() error { return p.media.Close() }

// pollRequests takes the forwarded writes in and runs them (not while the
// publication stands by: a replica's engine would refuse them anyway).
func (p *Publisher) pollRequests(now int64) int {
	work := p.inbox.Drain()
	for i := 0; i < 64; i++ {
		msg, _, ok := p.requests.NextMessage(p.rmsg[:0])
		if !ok {
			break
		}
		p.rmsg = msg[:0]
		work++
		if !p.standby && !p.broken {
			p.inbox.Handle(msg, now)
		}
	}
	return work
}

// appendAnswer queues a forwarded write's answer after the stream bytes
// pending: it is offered after the write's own bytes, in as many frames
// as its reply needs (forwarded.go), queued together so that nothing
// comes between them on the stream.
func (p *Publisher) appendAnswer(sender, seq uint64, offset int64, reply []byte) {
	if p.standby || p.broken {
		return
	}
	id, _ := p.o.Position()
	part := p.maxRec - HeaderLen - answerReplyOff
	// At least one frame, then one per part: an empty reply (the runner
	// never gives one) would otherwise make no progress and never end.
	for at := 0; ; {
		n := min(part, len(reply)-at)
		rec := len(p.pend)
		p.pend = append(p.pend, 0, 0, 0, 0)
		p.pend = appendAnswerFrame(p.pend, id, offset, sender, seq, reply, at, n)
		binary.LittleEndian.PutUint32(p.pend[rec:], uint32(len(p.pend)-rec-4))
		if at += n; at >= len(reply) {
			break
		}
	}
	p.open = -1
}
