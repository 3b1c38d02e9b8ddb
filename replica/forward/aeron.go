package forward

import (
	"fmt"
	"time"

	"github.com/goblin-kv/goblin/engine"
)

// AeronPath sends forwarded writes over Aeron (package
// replica/aeronsource): requests on the primary's status channel, answers
// on the replication stream, which the path hands to Forwarder.Answer.
// Every method runs on the loop goroutine.
type AeronPath interface {
	// ForwardUp reports whether a request sent now can be answered.
	ForwardUp() bool
	// SendRequest offers a request; false: not now.
	SendRequest(seq uint64, db int, resp3 bool, cmd []byte) bool
	// MaxCommand is the longest command a request carries; a longer one
	// (a large value) goes over TCP.
	MaxCommand() int
}

// DefaultResend is how long a request sent over Aeron waits for its answer
// before it is sent again (the primary answers a repeat without running
// it twice).
const DefaultResend = 500 * time.Millisecond

type aeronReq struct {
	s      *engine.Session
	token  uint64
	seq    uint64
	db     int
	resp3  bool
	cmd    []byte
	sent   bool  // offered at least once (the publication may refuse)
	sentAt int64 // its last offer, on the clock of Poll's now
	until  int64 // when it fails; 0: forwarded since the last Poll, which dates it
}

// aeronState is the forwarder's Aeron side. Loop goroutine.
type aeronState struct {
	path    AeronPath
	seq     uint64
	flight  map[uint64]*aeronReq
	resends int64
}

// forwardAeron sends the write over Aeron when the path is up and the
// command fits one request; false: use TCP (counted as a fallback when an
// Aeron path exists).
func (f *Forwarder) forwardAeron(s *engine.Session, token uint64, db int, resp3 bool, cmd []byte) bool {
	a := &f.aeron
	if a.path == nil {
		return false
	}
	if !a.path.ForwardUp() || len(cmd) > a.path.MaxCommand() || len(a.flight)+f.inQueue >= f.o.Queue {
		f.st.TCPFallbacks++
		return false
	}
	a.seq++
	r := &aeronReq{s: s, token: token, seq: a.seq, db: db, resp3: resp3, cmd: append([]byte(nil), cmd...)}
	r.sent = a.path.SendRequest(r.seq, db, resp3, r.cmd)
	if a.flight == nil {
		a.flight = make(map[uint64]*aeronReq)
	}
	a.flight[r.seq] = r
	f.st.Forwarded++
	f.st.OverAeron++
	return true
}

// Answer takes the primary's answer to the request seq sent over Aeron:
// the client is answered once this replica has applied the stream to
// offset. A repeated answer (the request was sent again) is ignored. Loop
// goroutine.
func (f *Forwarder) Answer(seq uint64, offset int64, reply []byte) {
	r := f.aeron.flight[seq]
	if r == nil {
		return
	}
	delete(f.aeron.flight, seq)
	f.waiting = append(f.waiting, pending{
		// until stays 0: the next Poll dates the wait on its own clock.
		result: result{s: r.s, token: r.token, reply: append([]byte(nil), reply...), offset: offset},
	})
}

// pollAeron sends again the requests not answered within DefaultResend
// (or not sent: the publication refused them) and fails those past the
// timeout, or all of them when the path goes down (the replica left the
// primary's Aeron stream: no answer can come).
func (f *Forwarder) pollAeron(now int64) int {
	a := &f.aeron
	if len(a.flight) == 0 {
		return 0
	}
	work := 0
	up := a.path.ForwardUp()
	for seq, r := range a.flight {
		if r.until == 0 { // forwarded since the last Poll: its clock starts now
			r.until, r.sentAt = now+int64(f.o.Timeout), now
		}
		switch {
		case !up || now > r.until:
			why := fmt.Sprintf("no answer from the primary over Aeron within %v", f.o.Timeout)
			if !up {
				why = "the Aeron path to the primary went down (the replica no longer follows its stream)"
			}
			delete(a.flight, seq)
			f.waiting = append(f.waiting, pending{result: result{s: r.s, token: r.token, offset: -1, failed: true,
				reply: fmt.Appendf(nil, "-ERR forwarded write: %s; the write may or may not have been applied\r\n", why)}})
			work++
		case !r.sent || now-r.sentAt >= int64(DefaultResend):
			if a.path.SendRequest(r.seq, r.db, r.resp3, r.cmd) {
				if r.sent {
					a.resends++
				}
				r.sent, r.sentAt = true, now
				work++
			}
		}
	}
	return work
}
