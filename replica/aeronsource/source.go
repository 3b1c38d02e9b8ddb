// Package aeronsource is the replica side of replication over Aeron: it
// follows a goblin primary whose stream is published once on an Aeron
// channel (package replication/aeronfeed) and applies it, catching up over
// the Redis-protocol link (package replica) whenever the Aeron stream
// alone cannot bring it to the primary's offset (docs/replication-aeron.md).
//
// # Replay-merge
//
// The Source subscribes to the channel first and buffers what arrives.
// The TCP link does the rest as for any replica: PSYNC, a snapshot at an
// offset (+FULLRESYNC) or the backlog's bytes (+CONTINUE), then the stream.
// As soon as the offset the link has applied falls inside the buffered
// Aeron bytes, with the same replication id, the link is handed off at
// that offset (replica.Link.Handoff) and the Source applies the Aeron
// stream from the next byte on: the snapshot and the TCP stream are the
// replay, Aeron the live stream.
//
// # Gaps
//
// Every frame says at which offset its bytes start, so the Source applies
// only the bytes that follow on from what it has: a frame it has seen is
// skipped (never applied twice), and a frame that starts past its offset
// (the primary dropped bytes it could not publish, the image was lost and
// joined again at the live position) is a gap. A gap, a new replication
// id, or silence (not even a heartbeat for Options.Silence) sends it back
// to the TCP link, which resumes with PSYNC from the offset applied:
// +CONTINUE while the primary's backlog still holds it, a full
// resynchronisation otherwise. It never applies bytes out of order.
//
// Every method runs on the store loop's goroutine.
package aeronsource

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/replica"
	"github.com/goblin-kv/goblin/replication/aeronfeed"
	"github.com/goblin-kv/goblin/transport"
)

// Defaults of Options.
const (
	DefaultSilence     = 2 * time.Second
	DefaultMaxBuffer   = 64 << 20
	DefaultStatusEvery = 200 * time.Millisecond
)

// ErrOptions is wrapped by every configuration error.
var ErrOptions = errors.New("aeronsource: invalid options")

// Options configure a Source. Link, Apply and Channel are required.
type Options struct {
	// Link is the Redis-protocol link to the primary: the catch-up path.
	Link *replica.Link
	// Apply is what the stream is applied to (the engine).
	Apply replica.Applier
	// Feed receives the bytes applied, in order (chained replicas); may be
	// nil.
	Feed func(applied []byte)
	// Channel is the Aeron channel the primary publishes on, as a
	// subscriber names it (multicast: the same endpoint and this host's
	// interface; MDC: aeron:udp?endpoint=<this host>:<port>|control=<primary>:<port>|control-mode=dynamic).
	Channel string
	// StreamID is the stream id (default aeronfeed.DefaultStreamID).
	StreamID int32
	// StatusChannel, when set, is where this replica's position goes to
	// the primary (aeron:udp?endpoint=<primary>:<port>);
	// StatusStreamID its stream id.
	StatusChannel  string
	StatusStreamID int32
	// Name names this replica in its status (default its listening port).
	Name string
	// ListeningPort is reported in the status.
	ListeningPort int
	// Silence is how long the Aeron stream may bring nothing, not even a
	// heartbeat, before the replica falls back to the link (default 2 s).
	Silence time.Duration
	// MaxBuffer bounds the Aeron bytes held during a catch-up (default
	// 64 MiB; the oldest go first).
	MaxBuffer int
	// StreamSlice bounds the commands applied per Poll (default 1024).
	StreamSlice int
	// Logger (default slog.Default()).
	Logger *slog.Logger
}

// Stats are the Source's counters.
type Stats struct {
	Live          bool  // applying the Aeron stream (false: catching up over TCP)
	Offset        int64 // applied
	PrimaryOffset int64 // the newest offset the stream announced
	Frames        int64 // frames received
	Duplicates    int64 // frames (or parts) already applied, skipped
	Gaps          int64 // gaps seen
	Handoffs      int64 // switches from the TCP link to the Aeron stream
	Fallbacks     int64 // switches back (gap, silence, new id)
	Foreign       int64 // frames of another primary's stream, ignored
	Resubscribes  int64 // subscriptions replaced after a silence
	BytesApplied  int64 // stream bytes applied from Aeron
}

// Source is a transport.Server and engine.ReplicaControl: the engine's
// REPLICAOF drives it, the loop polls it.
type Source struct {
	o     Options
	log   *slog.Logger
	link  *replica.Link
	media *aeronfeed.Media
	sub   *aeron.Subscription
	spub  *aeron.Publication

	following  bool
	host       string
	port       int
	live       bool
	ids        replica.IDs
	stream     []byte // live: received bytes, stream[head:] not applied
	head       int
	consumed   int
	stalled    bool
	more       bool  // the last Poll stopped at its message cap (Deadline)
	lastFrame  int64 // the loop's clock at the last frame
	lastStatus int64
	lastResub  int64 // the loop's clock at the last resubscribe
	now        int64

	// The catch-up buffer: Aeron bytes buf from offset bufStart on, all of
	// replication id bufID; bufOK once something was buffered.
	buf      []byte
	bufStart int64
	bufID    [aeronfeed.IDLen]byte
	bufOK    bool

	msg  []byte
	smsg []byte
	st   Stats
	wait *waiter // WaitFD (wait.go)

	// The channels in use: Options' until the node follows a primary
	// other than the first it followed (retarget).
	channel, statusChannel string
	firstHost              string
	lastSubTry             int64 // the loop's clock at the last subscription attempt (sub nil)

	// Forwarded writes over Aeron (forward.go).
	fpub     *aeron.Publication
	sender   uint64
	onAnswer func(seq uint64, offset int64, reply []byte)
	answers  aeronfeed.AnswerAssembler // an answer's parts (forward.go)
	fmsg     []byte
}

var _ transport.Server = (*Source)(nil)

// New starts a private media driver and subscribes to the channel.
func New(o Options) (*Source, error) {
	if o.Link == nil || o.Apply == nil || o.Channel == "" {
		return nil, fmt.Errorf("%w: a link, an applier and a channel are required", ErrOptions)
	}
	if o.StreamID == 0 {
		o.StreamID = aeronfeed.DefaultStreamID
	}
	if o.StatusStreamID == 0 {
		o.StatusStreamID = aeronfeed.DefaultStatusStreamID
	}
	if o.Silence <= 0 {
		o.Silence = DefaultSilence
	}
	if o.MaxBuffer <= 0 {
		o.MaxBuffer = DefaultMaxBuffer
	}
	if o.StreamSlice <= 0 {
		o.StreamSlice = 1024
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Name == "" {
		o.Name = "replica-" + strconv.Itoa(o.ListeningPort)
	}
	m, err := aeronfeed.StartMedia(o.Logger)
	if err != nil {
		return nil, err
	}
	w, err := newWaiter(o.Link.WaitFD(), m.Driver.WorkFD())
	if err != nil {
		m.Close()
		return nil, err
	}
	s := &Source{o: o, log: o.Logger, link: o.Link, media: m, channel: o.Channel, statusChannel: o.StatusChannel, wait: w}
	s.sub, err = m.Client.AddSubscription(o.Channel, o.StreamID)
	if err != nil {
		m.Close()
		w.close()
		return nil, fmt.Errorf("aeronsource: subscribe to the replication stream on %s: %w", o.Channel, err)
	}
	if o.StatusChannel != "" {
		s.spub, err = m.Client.AddPublication(o.StatusChannel, o.StatusStreamID)
		if err != nil {
			m.Close()
			w.close()
			return nil, fmt.Errorf("aeronsource: publish the status on %s: %w", o.StatusChannel, err)
		}
	}
	s.log.Info("replica: subscribed to the primary's Aeron replication stream", "channel", o.Channel,
		"stream", o.StreamID, "aeron_dir", m.Driver.Dir())
	return s, nil
}

// Follow implements engine.ReplicaControl: follow host:port, catching up
// over the link, then on the Aeron stream.
func (s *Source) Follow(host string, port int) bool {
	if s.following && s.host == host && s.port == port {
		return false
	}
	s.dropLive()
	s.following, s.host, s.port = true, host, port
	s.resetBuf()
	if s.firstHost == "" {
		s.firstHost = host
	}
	s.retarget(host)
	s.log.Info("replica: following a primary over Aeron, catching up over TCP first", "host", host, "port", port,
		"channel", s.channel)
	s.link.Follow(host, port)
	return true
}

// Unfollow implements engine.ReplicaControl (REPLICAOF NO ONE).
func (s *Source) Unfollow() {
	if !s.following {
		return
	}
	s.following = false
	if s.live {
		s.dropLive()
		// The link reports down again and shifts the ids as a promotion
		// does (replica.Link.Unfollow).
		ids := s.link.Handoff()
		s.link.SetHistory(newID(), ids.Offset, ids.ID, ids.Offset+1)
		return
	}
	s.link.Unfollow()
}

// SetHistory implements the engine's historySetter.
func (s *Source) SetHistory(id string, offset int64, id2 string, offset2 int64) {
	s.link.SetHistory(id, offset, id2, offset2)
}

// Role implements engine.ReplicaControl.
func (s *Source) Role() (host string, port int, state string, offset int64) { return s.link.Role() }

// AppendInfo implements engine.ReplicaControl: the link's lines (which a
// handed-off link fills from the Aeron stream's offset) and the Aeron
// source's.
func (s *Source) AppendInfo(b []byte) []byte {
	b = s.link.AppendInfo(b)
	line := func(k, v string) { b = append(append(append(append(b, k...), ':'), v...), "\r\n"...) }
	num := func(k string, v int64) { line(k, strconv.FormatInt(v, 10)) }
	line("aeron_channel", s.channel)
	if s.live {
		line("aeron_link", "aeron")
	} else {
		line("aeron_link", "tcp")
	}
	if s.onAnswer != nil { // --replica-forward-writes
		// Whether a forwarded write goes over Aeron now (ForwardUp) or
		// falls back to TCP: the request publication reaches the primary
		// and the replica follows its stream.
		if s.ForwardUp() {
			line("aeron_forward", "up")
		} else {
			line("aeron_forward", "down")
		}
	}
	num("aeron_primary_offset", s.st.PrimaryOffset)
	num("aeron_frames", s.st.Frames)
	num("aeron_duplicates", s.st.Duplicates)
	num("aeron_gaps", s.st.Gaps)
	num("aeron_handoffs", s.st.Handoffs)
	num("aeron_fallbacks", s.st.Fallbacks)
	num("aeron_foreign_frames", s.st.Foreign)
	num("aeron_resubscribes", s.st.Resubscribes)
	return b
}

// Stats fills st.
func (s *Source) Stats(st *Stats) {
	*st = s.st
	st.Live = s.live
	st.Offset = s.link.IDs().Offset
	if s.live {
		st.Offset = s.ids.Offset
	}
}

// Link returns the TCP link (its Stats feed the replica metrics).
func (s *Source) Link() *replica.Link { return s.link }

// ParksRaw implements server.RawParker: the Source's media driver runs
// on a goroutine of its own that parks through raw system calls
// (driver.Start), so the store loop parks raw too (docs/idle.md).
func (s *Source) ParksRaw() bool { return true }

// Name implements transport.Server.
func (s *Source) Name() string { return "replica/aeron" }

// Clients implements transport.Server.
func (s *Source) Clients() int { return s.link.Clients() }

// UpdateStats implements transport.Server.
func (s *Source) UpdateStats(st *transport.Stats) { s.link.UpdateStats(st) }

// WaitFD and CheckNow make the loop park on the link's descriptors (the
// TCP phase) and on the media driver's bell (the Aeron stream: wait.go);
// the Aeron stream is looked at on every cycle.
func (s *Source) WaitFD() int { return s.wait.epfd }

// CheckNow: see WaitFD.
func (s *Source) CheckNow() { s.link.CheckNow() }

// Close implements transport.Server.
func (s *Source) Close() error {
	err := s.link.Close()
	if merr := s.media.Close(); err == nil {
		err = merr
	}
	s.wait.close()
	return err
}

// Poll implements transport.Server. After it consumed (or offered)
// anything it wakes the media driver (Driver.Wake): a parked driver then
// answers with a status message, or sends, at once rather than when its
// park ends, up to 8 ms once quiet (driver.Options.WakeOnOffer).
func (s *Source) Poll(now int64) int {
	work := s.poll(now)
	if work > 0 {
		s.media.Driver.Wake()
	}
	return work
}

// Deadline implements server.Deadliner: the last Poll's now while work
// is left that no descriptor announces (messages past the 256-message
// cap, stream commands past StreamSlice), so the loop neither parks nor
// rests over it; else the link's.
func (s *Source) Deadline() int64 {
	if s.more || (s.live && !s.stalled && s.head+s.consumed < len(s.stream)) {
		return s.now
	}
	return s.link.Deadline()
}

func (s *Source) poll(now int64) int {
	s.now = now
	s.more = false
	s.unpark()
	// The link is polled live too: a run it stopped at the handoff may
	// still post an event, which only its Poll drains (and drops) — left
	// there, its eventfd would keep the loop from parking.
	work := s.link.Poll(now)
	if s.sub == nil { // a retarget whose subscription the driver refused so far
		if now-s.lastSubTry < int64(100*time.Millisecond) {
			return work
		}
		s.lastSubTry = now
		sub, err := s.media.Client.AddSubscription(s.channel, s.o.StreamID)
		if err != nil {
			s.log.Debug("aeron replica: subscribing to the new primary's stream; retrying", "channel", s.channel, "err", err)
			return work
		}
		s.sub = sub
		s.lastFrame = now
		s.log.Info("aeron replica: subscribed to the new primary's stream", "channel", s.channel)
	}
	if !s.following {
		// Not following: keep the subscription drained.
		s.more = true
		for i := 0; i < 64; i++ {
			if _, _, ok := s.sub.NextMessage(s.msg[:0]); !ok {
				s.more = false
				break
			}
			work++
		}
		return work
	}
	s.more = true // the cap reached: messages may be left (Deadline)
	for i := 0; i < 256; i++ {
		msg, _, ok := s.sub.NextMessage(s.msg[:0])
		if !ok {
			s.more = false
			break
		}
		s.msg = msg[:0]
		work++
		var f aeronfeed.Frame
		if aeronfeed.Parse(msg, &f) != nil {
			continue
		}
		if f.Kind == aeronfeed.KindAnswer {
			s.onAnswerFrame(&f)
			continue
		}
		if !s.onFrame(&f, now) {
			s.more = false
			break
		}
	}
	if s.live {
		if s.head+s.consumed < len(s.stream) && !s.stalled {
			work += s.apply(s.o.StreamSlice)
		}
		if now-s.lastFrame > int64(s.o.Silence) {
			s.fallBack("the Aeron stream brought nothing, not even a heartbeat", "silence", s.o.Silence)
		}
	} else {
		s.tryHandoff(now)
		if !s.live && now-s.lastFrame > int64(s.o.Silence) && now-s.lastResub > int64(s.o.Silence) {
			s.resubscribe(now)
		}
	}
	if s.spub != nil && now-s.lastStatus >= int64(DefaultStatusEvery) {
		s.lastStatus = now
		off := s.link.IDs().Offset
		if s.live {
			off = s.ids.Offset
		}
		s.smsg = aeronfeed.AppendStatus(s.smsg[:0], s.o.ListeningPort, max(off, 0), s.o.Name)
		s.spub.Offer(s.smsg) // a lost status is replaced by the next
		s.media.Driver.Wake()
	}
	return work
}

// onFrame takes a data or heartbeat frame; false when the live phase fell
// back to the link (the poll's other frames wait for the next poll).
func (s *Source) onFrame(f *aeronfeed.Frame, now int64) bool {
	if s.foreign(f, now) {
		s.st.Foreign++
		return true
	}
	s.st.Frames++
	s.lastFrame = now
	s.st.PrimaryOffset = max(s.st.PrimaryOffset, f.End())
	if s.live {
		return s.onLive(f)
	}
	s.onCatchup(f)
	return true
}

// ForeignGrace is how long the primary a replica follows must have been
// silent (three of its heartbeats, aeronfeed.DefaultHeartbeat) before a
// frame of another replication id is taken for its successor.
const ForeignGrace = 3 * aeronfeed.DefaultHeartbeat

// foreign reports a frame of another replication history than the one
// this replica follows, to be ignored. After a double failover two
// primaries can publish on one multicast group for a while, until
// Sentinel turns the stale one into a replica: a replica follows the one
// its link names and ignores the other, instead of switching between the
// two at each frame (each switch a catch-up over TCP, each catch-up's
// buffer emptied by the other's next frame).
//   - Live: another id is foreign while the stream being applied is alive
//     (a frame of its own within ForeignGrace). Once that stream has been
//     quiet for longer, another id is its primary's successor (a restart,
//     a promotion): onLive falls back to the link at once, without waiting
//     for Options.Silence.
//   - Catching up: another id than the link's, once the link is connected
//     (it learned its primary's id from PSYNC). Before that, any id is
//     buffered, as the handoff needs the link's id anyway.
func (s *Source) foreign(f *aeronfeed.Frame, now int64) bool {
	if s.live {
		return string(f.ID) != s.ids.ID && now-s.lastFrame <= int64(ForeignGrace)
	}
	if _, _, state, _ := s.link.Role(); state != replica.StateConnected {
		return false
	}
	id := s.link.IDs().ID
	return id != "" && string(f.ID) != id
}

// onCatchup buffers a frame while the link catches up: contiguous bytes
// of one id; anything else starts the buffer again at the frame.
func (s *Source) onCatchup(f *aeronfeed.Frame) {
	end := s.bufStart + int64(len(s.buf))
	if !s.bufOK || [aeronfeed.IDLen]byte(f.ID) != s.bufID || f.Offset > end {
		s.buf, s.bufStart, s.bufID, s.bufOK = s.buf[:0], f.Offset, [aeronfeed.IDLen]byte(f.ID), true
		end = f.Offset
	}
	if f.End() > end { // skip what is buffered already
		s.buf = append(s.buf, f.Payload[end-f.Offset:]...)
	}
	if over := len(s.buf) - s.o.MaxBuffer; over > 0 {
		n := copy(s.buf, s.buf[over:])
		s.buf = s.buf[:n]
		s.bufStart += int64(over)
	}
}

// tryHandoff switches to the Aeron stream once the link, connected and
// following the stream, has applied an offset the buffer covers.
func (s *Source) tryHandoff(now int64) {
	if !s.bufOK {
		return
	}
	_, _, state, _ := s.link.Role()
	ids := s.link.IDs()
	if state != replica.StateConnected || ids.ID != string(s.bufID[:]) {
		return
	}
	end := s.bufStart + int64(len(s.buf))
	if ids.Offset < s.bufStart || ids.Offset > end {
		if ids.Offset > end {
			// The link is ahead of everything buffered: drop it.
			s.buf, s.bufStart = s.buf[:0], end
		}
		return
	}
	ids = s.link.Handoff()
	if ids.Offset < s.bufStart || ids.Offset > end {
		// Cannot happen: Handoff keeps the offset applied. Go back.
		s.log.Error("aeron replica: the link's offset moved at the handoff; resuming over TCP", "offset", ids.Offset)
		s.link.Resume(s.host, s.port, ids)
		return
	}
	s.ids = ids
	s.live = true
	s.stream = append(s.stream[:0], s.buf[ids.Offset-s.bufStart:]...)
	s.head, s.consumed, s.stalled = 0, 0, false
	s.resetBuf()
	s.lastFrame = now
	s.st.Handoffs++
	s.o.Apply.SetMasterLink(true)
	s.link.Carried(s.ids.Offset, time.Now().UnixMilli())
	s.log.Info("aeron replica: caught up; following the Aeron stream", "offset", ids.Offset, "channel", s.channel)
}

// onLive takes a frame while live; false when it fell back to the link.
func (s *Source) onLive(f *aeronfeed.Frame) bool {
	if string(f.ID) != s.ids.ID {
		s.fallBack("the primary's replication id changed", "replid", string(f.ID))
		s.onCatchup(f)
		return false
	}
	recv := s.ids.Offset + int64(len(s.stream)-s.head)
	switch {
	case f.Offset > recv:
		s.st.Gaps++
		s.fallBack("a gap in the Aeron stream", "have", recv, "frame_starts_at", f.Offset)
		s.onCatchup(f)
		return false
	case f.End() <= recv:
		if len(f.Payload) > 0 {
			s.st.Duplicates++
		}
		return true
	}
	if f.Offset < recv {
		s.st.Duplicates++
	}
	s.stream = append(s.stream, f.Payload[recv-f.Offset:]...)
	s.stalled = false
	return true
}

// apply applies up to max whole commands of the stream (replica.Link's
// applyStream, for the Aeron stream).
func (s *Source) apply(max int) int {
	consumed, applied, _ := s.o.Apply.ApplyMaster(s.stream[s.head+s.consumed:], max)
	if consumed == 0 {
		s.stalled = true
		return 0
	}
	s.consumed += consumed
	if applied > 0 {
		if s.o.Feed != nil {
			s.o.Feed(s.stream[s.head : s.head+applied])
		}
		s.ids.Offset += int64(applied)
		s.st.BytesApplied += int64(applied)
		s.head += applied
		s.consumed -= applied
		s.link.Carried(s.ids.Offset, time.Now().UnixMilli())
	}
	switch {
	case s.head == len(s.stream):
		s.stream, s.head = s.stream[:0], 0
		if cap(s.stream) > 1<<20 {
			s.stream = nil
		}
	case s.head >= 64<<10 && s.head >= len(s.stream)/2:
		n := copy(s.stream, s.stream[s.head:])
		s.stream, s.head = s.stream[:n], 0
	}
	return 1 + consumed/4096
}

// resubscribe replaces the subscription after a silence: an image stuck
// behind a loss the publication can no longer repair (it fell back further
// than the term buffer holds, under fc=max) brings nothing ever again; a
// new subscription joins the stream at its live position, and the TCP
// link bridges the gap. The driver's reply is awaited on the loop (a few
// milliseconds, once per Options.Silence at most, only while catching up).
func (s *Source) resubscribe(now int64) {
	s.lastResub = now
	if s.sub == nil {
		return // Poll subscribes
	}
	if err := s.sub.Close(); err != nil {
		s.log.Warn("aeron replica: closing the subscription", "err", err)
	}
	sub, err := s.media.Client.AddSubscription(s.channel, s.o.StreamID)
	if err != nil {
		s.log.Error("aeron replica: subscribing again failed; retrying", "channel", s.channel, "err", err)
		return
	}
	s.sub = sub
	s.st.Resubscribes++
	s.resetBuf()
	s.log.Debug("aeron replica: the stream was silent; subscribed again", "channel", s.channel)
}

// fallBack leaves the Aeron stream for the link, which resumes with PSYNC
// from the offset applied.
func (s *Source) fallBack(why string, args ...any) {
	s.st.Fallbacks++
	s.log.Warn("aeron replica: "+why+"; catching up over TCP", append(args, "offset", s.ids.Offset)...)
	ids := s.ids
	s.dropLive()
	s.resetBuf()
	s.link.Resume(s.host, s.port, ids)
}

// dropLive leaves the live phase, dropping the bytes not applied (and the
// master client's open MULTI).
func (s *Source) dropLive() {
	if !s.live {
		return
	}
	s.live = false
	s.o.Apply.ResetMaster()
	s.stream, s.head, s.consumed, s.stalled = s.stream[:0], 0, 0, false
}

func (s *Source) resetBuf() {
	s.buf, s.bufStart, s.bufOK = s.buf[:0], 0, false
}

// retarget points the subscription and the status publication at the
// primary on host: when it is not the first primary this replica
// followed (a failover), the host of the channel's control= (MDC) and of
// the status channel's endpoint= become host, their ports kept; a
// multicast channel is kept as it is (the new primary publishes on the
// same group). Back on the first primary, the configured channels again.
// Adding a subscription waits for the driver's reply (milliseconds), on
// REPLICAOF only.
func (s *Source) retarget(host string) {
	ch, st := s.o.Channel, s.o.StatusChannel
	if host != s.firstHost {
		ch, st = withHost(ch, "control", host), withHost(st, "endpoint", host)
	}
	if ch != s.channel {
		if s.sub != nil {
			if err := s.sub.Close(); err != nil {
				s.log.Warn("aeron replica: closing the subscription", "err", err)
			}
		}
		// The driver closes the old subscription's endpoint after it
		// answers: a new one on the same endpoint may be refused (address
		// in use) for a moment. Poll subscribes, retrying every 100 ms.
		s.sub, s.channel, s.lastSubTry = nil, ch, 0
	}
	if st != s.statusChannel && s.o.StatusChannel != "" {
		if s.spub != nil {
			if err := s.spub.Close(); err != nil {
				s.log.Warn("aeron replica: closing the status publication", "err", err)
			}
			s.spub = nil
		}
		spub, err := s.media.Client.AddPublication(st, s.o.StatusStreamID)
		if err != nil {
			s.log.Error("aeron replica: cannot send the status to the new primary", "channel", st, "err", err)
			return
		}
		s.spub, s.statusChannel = spub, st
		if s.onAnswer != nil {
			if err := s.addRequestPub(); err != nil {
				s.log.Error("aeron replica: cannot forward writes to the new primary over Aeron", "channel", st, "err", err)
			}
		}
	}
}

// withHost returns channel with the host of its key= parameter replaced
// by host (the port kept); channel itself when it has no such parameter.
func withHost(channel, key, host string) string {
	q := strings.IndexByte(channel, '?')
	if q < 0 {
		return channel
	}
	params := strings.Split(channel[q+1:], "|")
	changed := false
	for i, kv := range params {
		v, ok := strings.CutPrefix(kv, key+"=")
		if !ok {
			continue
		}
		_, port, err := net.SplitHostPort(v)
		if err != nil {
			continue
		}
		params[i] = key + "=" + net.JoinHostPort(host, port)
		changed = true
	}
	if !changed {
		return channel
	}
	return channel[:q+1] + strings.Join(params, "|")
}
