package aeronfeed

import (
	"encoding/binary"
)

// Forwarded writes over Aeron (docs/replication-aeron.md, "Forwarded
// writes"): a replica that forwards its clients' writes sends each one as
// a request on the primary's status channel, on stream id StreamID+2
// (ForwardStreamOffset); the primary runs it and answers on the
// replication stream itself with a KindAnswer frame addressed to that
// replica (its sender id) and request (its sequence number). The frame's
// Offset is master_repl_offset after the write, so the replica answers its
// client only once it has applied the stream that far: an answer always
// follows its write.

// ForwardStreamOffset is added to the replication stream id to get the
// forwarded requests' stream id (the status stream is +1).
const ForwardStreamOffset = 2

// A forwarded request, little-endian:
//
//	0   magic   "GBF1"
//	4   flags   1 byte: 1 = answer in RESP3; 3 bytes zero
//	8   sender  uint64: the replica's sender id (random per process)
//	16  seq     uint64: the request's number, from 1, per sender
//	24  db      uint32: the client's database
//	28  cmd     the RESP command as the client sent it
const (
	reqFlagsOff  = 4
	reqSenderOff = 8
	reqSeqOff    = 16
	reqDBOff     = 24
	// RequestHeaderLen is the length of a request's header.
	RequestHeaderLen = 28
	flagRESP3        = 1
)

var requestMagic = [4]byte{'G', 'B', 'F', '1'}

// Request is one decoded forwarded request; Cmd aliases the message.
type Request struct {
	Sender uint64
	Seq    uint64
	DB     int
	RESP3  bool
	Cmd    []byte
}

// AppendRequest appends a forwarded request.
func AppendRequest(dst []byte, sender, seq uint64, db int, resp3 bool, cmd []byte) []byte {
	dst = append(dst, requestMagic[:]...)
	var flags byte
	if resp3 {
		flags = flagRESP3
	}
	dst = append(dst, flags, 0, 0, 0)
	dst = binary.LittleEndian.AppendUint64(dst, sender)
	dst = binary.LittleEndian.AppendUint64(dst, seq)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(db))
	return append(dst, cmd...)
}

// ParseRequest decodes a forwarded request (no copy).
func ParseRequest(msg []byte, r *Request) error {
	if len(msg) <= RequestHeaderLen || [4]byte(msg[:4]) != requestMagic || msg[reqFlagsOff]&^flagRESP3 != 0 {
		return ErrFrame
	}
	r.RESP3 = msg[reqFlagsOff]&flagRESP3 != 0
	r.Sender = binary.LittleEndian.Uint64(msg[reqSenderOff:])
	r.Seq = binary.LittleEndian.Uint64(msg[reqSeqOff:])
	db := binary.LittleEndian.Uint32(msg[reqDBOff:])
	if r.Seq == 0 || db > 1<<16 {
		return ErrFrame
	}
	r.DB = int(db)
	r.Cmd = msg[RequestHeaderLen:]
	return nil
}

// An answer's payload (the frame's kind is KindAnswer, its Offset the
// stream offset after the write, its ID the replication id):
//
//	0   sender  uint64
//	8   seq     uint64
//	16  total   uint32: the length of the whole reply
//	20  at      uint32: where this part starts in the reply
//	24  part    the reply's bytes at … at+len(part)
//
// A reply longer than one frame carries (MaxPayload less the headers) goes
// in parts, one frame each, one right after the other on the stream (the
// publisher queues them together), so a replica puts them back together
// with one AnswerAssembler; a frame stays well under the receiver window
// whatever the reply's size.
const (
	answerTotalOff = 16
	answerAtOff    = 20
	answerReplyOff = 24
)

// Answer is one decoded answer, or part of one; Part aliases the frame.
type Answer struct {
	Sender uint64
	Seq    uint64
	Offset int64 // the stream offset at or past the end of the write
	Total  int   // the length of the whole reply
	At     int   // where Part starts in it
	Part   []byte
}

// ParseAnswer decodes the payload of a KindAnswer frame.
func ParseAnswer(f *Frame, a *Answer) error {
	if f.Kind != KindAnswer || len(f.Payload) <= answerReplyOff {
		return ErrFrame
	}
	a.Sender = binary.LittleEndian.Uint64(f.Payload)
	a.Seq = binary.LittleEndian.Uint64(f.Payload[8:])
	a.Total = int(binary.LittleEndian.Uint32(f.Payload[answerTotalOff:]))
	a.At = int(binary.LittleEndian.Uint32(f.Payload[answerAtOff:]))
	a.Offset = f.Offset
	a.Part = f.Payload[answerReplyOff:]
	if a.At+len(a.Part) > a.Total {
		return ErrFrame
	}
	return nil
}

// appendAnswerFrame appends a KindAnswer frame holding reply[at:at+n].
func appendAnswerFrame(dst []byte, id string, offset int64, sender, seq uint64, reply []byte, at, n int) []byte {
	dst = AppendHeader(dst, KindAnswer, id, offset)
	dst = binary.LittleEndian.AppendUint64(dst, sender)
	dst = binary.LittleEndian.AppendUint64(dst, seq)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(reply)))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(at))
	return append(dst, reply[at:at+n]...)
}

// AnswerAssembler puts the parts of an answer back together on a
// replica. The zero value is ready. One goroutine.
type AnswerAssembler struct {
	seq uint64
	buf []byte
}

// answerBufKeep caps what an assembler keeps after a large reply.
const answerBufKeep = 1 << 20

// Add takes one answer (or part) addressed to this replica; done is true
// when it completes a reply, which is then whole in reply (a's Part when
// it came in one frame, else the assembler's buffer: valid until the next
// Add). A part that does not continue the reply being assembled (a late
// join, a resent answer starting over) drops what was assembled: the
// primary sends every part again with the answer's next copy.
func (as *AnswerAssembler) Add(a *Answer) (reply []byte, done bool) {
	if a.At == 0 && len(a.Part) == a.Total {
		return a.Part, true
	}
	if a.At == 0 {
		if cap(as.buf) > answerBufKeep && a.Total <= answerBufKeep {
			as.buf = nil
		}
		as.seq, as.buf = a.Seq, append(as.buf[:0], a.Part...)
		return nil, false
	}
	if a.Seq != as.seq || a.At != len(as.buf) {
		as.buf = as.buf[:0]
		return nil, false
	}
	as.buf = append(as.buf, a.Part...)
	if len(as.buf) < a.Total {
		return nil, false
	}
	reply = as.buf
	as.buf = as.buf[:0]
	if cap(reply) > answerBufKeep {
		as.buf = nil
	}
	return reply, true
}

// RunFunc runs a forwarded write on the primary (the server's engine) for
// sender, in database db, answering in RESP3 if resp3, and appends its
// whole reply to out. held: the primary holds writes now (CLIENT PAUSE,
// FAILOVER): nothing ran, try again later. Loop goroutine.
type RunFunc func(sender uint64, db int, resp3 bool, cmd, out []byte) (reply []byte, held bool)

// Inbox defaults.
const (
	// InboxRemembered is how many answers the inbox keeps per sender to
	// answer a retransmitted request again without running it twice.
	InboxRemembered = 1024
	// InboxSenders bounds the senders remembered (the least recent goes).
	InboxSenders = 256
	// InboxReplyKept is the longest reply remembered whole for a repeat;
	// a longer one is remembered as an error saying the write ran, so
	// that InboxRemembered answers of large replies (LPOP of many large
	// values) cannot hold gigabytes.
	InboxReplyKept = 64 << 10
)

// replyNotKept answers a repeat of a request whose reply was longer than
// InboxReplyKept.
const replyNotKept = "-ERR forwarded write: the primary ran it, but its reply was too long to keep for the repeated request; read the result from the primary\r\n"

type inboxAnswer struct {
	held   bool // queued, not run yet
	offset int64
	reply  []byte
}

type inboxSender struct {
	answers map[uint64]*inboxAnswer
	order   []uint64 // seqs in the order run, for forgetting the oldest
	floor   uint64   // every seq at or below it was forgotten: ignored
	last    int64    // the loop's clock at its last request
}

// Inbox is the primary's side of forwarded writes: it runs each request
// exactly once — a retransmitted one (the replica heard no answer) gets
// the answer it had, again — and hands the answers to Send. Loop goroutine.
type Inbox struct {
	run     RunFunc
	forget  func(sender uint64)
	send    func(sender, seq uint64, offset int64, reply []byte)
	offset  func() int64
	senders map[uint64]*inboxSender
	queue   []Request // requests waiting for writes to be allowed again; Cmd a copy
	out     []byte
	st      InboxStats
}

// InboxStats are the inbox's counters.
type InboxStats struct {
	Requests   int64 // requests received (retransmits included)
	Ran        int64 // run on the primary
	Repeated   int64 // retransmits answered again without running
	Ignored    int64 // malformed, or too old to be remembered
	HeldQueued int   // waiting for writes to be allowed again
}

// NewInbox returns an inbox that runs requests with run and answers
// through send; offset is master_repl_offset now.
func NewInbox(run RunFunc, offset func() int64, send func(sender, seq uint64, offset int64, reply []byte)) *Inbox {
	return &Inbox{run: run, send: send, offset: offset, senders: make(map[uint64]*inboxSender), forget: func(uint64) {}}
}

// OnForget installs forget, called with each sender the inbox forgets
// (the least recently heard, past InboxSenders): what the runner keeps
// for it (its sessions) can go. Before the first Handle.
func (in *Inbox) OnForget(forget func(sender uint64)) { in.forget = forget }

// Handle takes one request message received at now.
func (in *Inbox) Handle(msg []byte, now int64) {
	in.st.Requests++
	var r Request
	if ParseRequest(msg, &r) != nil {
		in.st.Ignored++
		return
	}
	snd := in.sender(r.Sender, now)
	if a, ok := snd.answers[r.Seq]; ok {
		if !a.held {
			in.st.Repeated++
			in.send(r.Sender, r.Seq, a.offset, a.reply)
		}
		return
	}
	if r.Seq <= snd.floor {
		in.st.Ignored++
		return
	}
	a := &inboxAnswer{held: true}
	snd.answers[r.Seq] = a
	snd.order = append(snd.order, r.Seq)
	for len(snd.order) > InboxRemembered {
		old := snd.order[0]
		if x := snd.answers[old]; x != nil && x.held {
			// Still queued, and so is every later one (the queue runs in
			// this order): remember them all until they have run.
			break
		}
		snd.order = snd.order[1:]
		delete(snd.answers, old)
		snd.floor = max(snd.floor, old)
	}
	if len(in.queue) == 0 && in.runOne(&r) {
		return // ran at once: r.Cmd, which aliases msg, need not be kept
	}
	r.Cmd = append([]byte(nil), r.Cmd...)
	in.queue = append(in.queue, r)
}

// Drain runs the queued requests in order until one is held. It returns
// how many ran.
func (in *Inbox) Drain() int {
	n := 0
	for len(in.queue) > 0 && in.runOne(&in.queue[0]) {
		in.queue[0] = Request{}
		in.queue = in.queue[1:]
		n++
	}
	if len(in.queue) == 0 {
		in.queue = in.queue[:0:0]
	}
	return n
}

// runOne runs q and answers it; false: held, nothing ran.
func (in *Inbox) runOne(q *Request) bool {
	reply, held := in.run(q.Sender, q.DB, q.RESP3, q.Cmd, in.out[:0])
	if held {
		return false
	}
	in.out = reply[:0]
	off := in.offset()
	if snd := in.senders[q.Sender]; snd != nil {
		if a := snd.answers[q.Seq]; a != nil {
			a.held, a.offset = false, off
			if len(reply) <= InboxReplyKept {
				a.reply = append([]byte(nil), reply...)
			} else {
				a.reply = []byte(replyNotKept)
			}
		}
	} else {
		in.forget(q.Sender) // forgotten while its request was held
	}
	in.st.Ran++
	in.send(q.Sender, q.Seq, off, reply)
	return true
}

func (in *Inbox) sender(id uint64, now int64) *inboxSender {
	s := in.senders[id]
	if s == nil {
		if len(in.senders) >= InboxSenders {
			var oldest uint64
			var at int64 = 1<<63 - 1
			for k, v := range in.senders {
				if v.last < at {
					oldest, at = k, v.last
				}
			}
			delete(in.senders, oldest)
			in.forget(oldest)
		}
		s = &inboxSender{answers: make(map[uint64]*inboxAnswer)}
		in.senders[id] = s
	}
	s.last = now
	return s
}

// Stats fills st.
func (in *Inbox) Stats(st *InboxStats) {
	*st = in.st
	st.HeldQueued = len(in.queue)
}
