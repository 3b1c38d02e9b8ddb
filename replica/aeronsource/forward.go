package aeronsource

import (
	"crypto/rand"
	"encoding/binary"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/replication/aeronfeed"
)

// Forwarded writes over Aeron (package replica/forward drives them): the
// Source sends each request on the primary's status channel, stream
// StreamID+2, and hands the answers it finds on the replication stream —
// KindAnswer frames addressed to its sender id — to OnAnswer. Every method
// runs on the loop goroutine.

// EnableForwarding adds the request publication (on the status channel,
// which must be set) and installs onAnswer, called for each answer to this
// replica's requests. Before the loop runs.
func (s *Source) EnableForwarding(onAnswer func(seq uint64, offset int64, reply []byte)) error {
	if s.statusChannel == "" {
		return ErrOptions
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	s.sender = binary.LittleEndian.Uint64(id[:]) | 1
	s.onAnswer = onAnswer
	return s.addRequestPub()
}

func (s *Source) addRequestPub() error {
	if s.fpub != nil {
		if err := s.fpub.Close(); err != nil {
			s.log.Warn("aeron replica: closing the forwarded writes' publication", "err", err)
		}
		s.fpub = nil
	}
	p, err := s.media.Client.AddPublication(s.statusChannel, s.o.StreamID+aeronfeed.ForwardStreamOffset)
	if err != nil {
		return err
	}
	s.fpub = p
	return nil
}

// ForwardUp reports whether a write can go over Aeron now: the request
// publication reaches the primary and the replica follows its Aeron
// stream (where the answer comes).
func (s *Source) ForwardUp() bool {
	return s.fpub != nil && s.live && s.fpub.IsConnected()
}

// SendRequest offers one forwarded request; false when it could not be
// offered now (the caller retries, or falls back to TCP).
func (s *Source) SendRequest(seq uint64, db int, resp3 bool, cmd []byte) bool {
	if s.fpub == nil {
		return false
	}
	s.fmsg = aeronfeed.AppendRequest(s.fmsg[:0], s.sender, seq, db, resp3, cmd)
	r := s.fpub.Offer(s.fmsg)
	if r == aeron.AdminAction {
		r = s.fpub.Offer(s.fmsg)
	}
	if r > 0 {
		s.media.Driver.Wake() // a parked driver sends it now, not when its park ends
	}
	return r > 0
}

// MaxCommand is the longest command one request carries: a request is
// one frame of at most aeronfeed.MaxPayload (well under the primary's
// receiver window, which a longer message could wait on for ever).
func (s *Source) MaxCommand() int {
	n := aeronfeed.MaxPayload
	if s.fpub != nil {
		n = min(n, s.fpub.MaxMessageLength())
	}
	return n - aeronfeed.RequestHeaderLen
}

// onAnswerFrame hands an answer addressed to this replica to onAnswer.
func (s *Source) onAnswerFrame(f *aeronfeed.Frame) {
	var a aeronfeed.Answer
	if s.onAnswer == nil || aeronfeed.ParseAnswer(f, &a) != nil || a.Sender != s.sender {
		return
	}
	if reply, done := s.answers.Add(&a); done {
		s.onAnswer(a.Seq, a.Offset, reply)
	}
}
