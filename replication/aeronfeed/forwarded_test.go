package aeronfeed

import (
	"testing"
	"time"
)

// TestRequestRoundTrip: a request and an answer frame decode to what was
// encoded; malformed ones are refused.
func TestRequestRoundTrip(t *testing.T) {
	cmd := []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n")
	msg := AppendRequest(nil, 0xfeedface, 7, 5, true, cmd)
	var r Request
	if err := ParseRequest(msg, &r); err != nil || r.Sender != 0xfeedface || r.Seq != 7 || r.DB != 5 || !r.RESP3 || string(r.Cmd) != string(cmd) {
		t.Fatalf("ParseRequest: %+v %v", r, err)
	}
	for _, bad := range [][]byte{msg[:RequestHeaderLen], AppendRequest(nil, 1, 0, 0, false, cmd), append([]byte("GBS1"), msg[4:]...)} {
		if ParseRequest(bad, &r) == nil {
			t.Errorf("ParseRequest(%q): no error", bad)
		}
	}
	fr := appendAnswerFrame(nil, "0123456789012345678901234567890123456789", 4242, 0xfeedface, 7, []byte("+OK\r\n"), 0, 5)
	var f Frame
	var a Answer
	if err := Parse(fr, &f); err != nil || f.Kind != KindAnswer {
		t.Fatalf("Parse(answer frame): kind %d %v", f.Kind, err)
	}
	if err := ParseAnswer(&f, &a); err != nil || a.Sender != 0xfeedface || a.Seq != 7 || a.Offset != 4242 || a.Total != 5 || a.At != 0 || string(a.Part) != "+OK\r\n" {
		t.Fatalf("ParseAnswer: %+v %v", a, err)
	}
	f.Kind = KindData
	if ParseAnswer(&f, &a) == nil {
		t.Error("ParseAnswer of a data frame: no error")
	}
}

// TestAnswerInParts: a reply cut into parts (as the publisher cuts one
// longer than a frame) comes out of the assembler whole, once, after its
// last part; a reply in one frame comes out at once; parts that do not
// continue the reply being assembled (a replica that joined mid-answer,
// the next copy of a resent answer starting over) never make a reply of
// pieces.
func TestAnswerInParts(t *testing.T) {
	const id = "0123456789012345678901234567890123456789"
	reply := make([]byte, 100_000)
	for i := range reply {
		reply[i] = byte('a' + i%26)
	}
	const part = 30_000
	frames := func(seq uint64) [][]byte {
		var out [][]byte
		for at := 0; at < len(reply); at += part {
			out = append(out, appendAnswerFrame(nil, id, 99, 1, seq, reply, at, min(part, len(reply)-at)))
		}
		return out
	}
	add := func(as *AnswerAssembler, fr []byte) ([]byte, bool) {
		var f Frame
		var a Answer
		if err := Parse(fr, &f); err != nil {
			t.Fatal(err)
		}
		if err := ParseAnswer(&f, &a); err != nil {
			t.Fatal(err)
		}
		return as.Add(&a)
	}
	var as AnswerAssembler
	fs := frames(5)
	for i, fr := range fs {
		got, done := add(&as, fr)
		if done != (i == len(fs)-1) {
			t.Fatalf("part %d of %d: done %v", i+1, len(fs), done)
		}
		if done && string(got) != string(reply) {
			t.Fatalf("the assembled reply: %d bytes, differs from the %d sent", len(got), len(reply))
		}
	}
	// Joined mid-answer: the tail parts make nothing; the next whole copy does.
	var late AnswerAssembler
	for _, fr := range append(frames(6)[2:], frames(6)...) {
		if got, done := add(&late, fr); done && string(got) != string(reply) {
			t.Fatal("a reply assembled from a late join's tail")
		}
	}
	// A copy starting over in the middle: the broken one is dropped.
	var over AnswerAssembler
	n := 0
	for _, fr := range append(frames(7)[:2], frames(7)...) {
		if got, done := add(&over, fr); done {
			n++
			if string(got) != string(reply) {
				t.Fatal("a reply assembled across two copies")
			}
		}
	}
	if n != 1 {
		t.Fatalf("a first copy cut short then a whole copy: %d replies, want 1", n)
	}
	// One frame: whole at once.
	if got, done := add(&as, appendAnswerFrame(nil, id, 1, 1, 8, []byte(":1\r\n"), 0, 4)); !done || string(got) != ":1\r\n" {
		t.Fatalf("a reply in one frame: %q %v", got, done)
	}
	// A part claiming more than its total is refused.
	bad := appendAnswerFrame(nil, id, 1, 1, 9, reply[:10], 0, 10)
	bad[HeaderLen+answerTotalOff] = 5
	var f Frame
	var a Answer
	if Parse(bad, &f) != nil || ParseAnswer(&f, &a) == nil {
		t.Error("ParseAnswer of a part longer than its total: no error")
	}
}

// TestInboxRunsInPlaceAndForgets: a request that runs at once runs on the
// received message's bytes (no copy); a held one is copied (the message's
// buffer is reused); the inbox tells its runner which senders it forgets
// past InboxSenders, and about a forgotten sender whose held request ran.
func TestInboxRunsInPlaceAndForgets(t *testing.T) {
	held := false
	var ranOn []byte
	var forgot []uint64
	in := NewInbox(func(sender uint64, db int, resp3 bool, cmd, out []byte) ([]byte, bool) {
		if held {
			return out, true
		}
		ranOn = cmd
		return append(out, "+OK\r\n"...), false
	}, func() int64 { return 0 }, func(uint64, uint64, int64, []byte) {})
	in.OnForget(func(s uint64) { forgot = append(forgot, s) })
	cmd := []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n")
	msg := AppendRequest(nil, 1, 1, 0, false, cmd)
	in.Handle(msg, 1)
	if len(ranOn) == 0 || &ranOn[0] != &msg[RequestHeaderLen] {
		t.Error("a request that ran at once was run on a copy, not on the message")
	}
	held = true
	msg = AppendRequest(nil, 2, 1, 0, false, cmd)
	in.Handle(msg, 2)
	for i := range msg {
		msg[i] = 0 // the receive buffer, reused
	}
	for s := uint64(3); s < InboxSenders+3; s++ { // sender 2 is the least recent past the bound
		in.Handle(AppendRequest(nil, s, 1, 0, false, cmd), int64(s))
	}
	if len(forgot) != 2 || forgot[0] != 1 || forgot[1] != 2 {
		t.Fatalf("forgotten past %d senders: %v, want 1 then 2", InboxSenders, forgot)
	}
	held = false
	in.Drain()
	if string(ranOn) != string(cmd) {
		t.Fatalf("a held request ran on %q, want its own copy %q", ranOn, cmd)
	}
	if len(forgot) < 3 || forgot[2] != 2 {
		t.Fatalf("forgot %v after sender 2's held request ran: want 2 told again (its session can go)", forgot)
	}
}

// TestInboxKeepsLongRepliesShort: a repeat of a request whose reply was
// longer than InboxReplyKept gets an error saying the write ran (not the
// reply, which the inbox did not keep), and the write does not run again.
func TestInboxKeepsLongRepliesShort(t *testing.T) {
	runs := 0
	var answers []string
	in := NewInbox(func(sender uint64, db int, resp3 bool, cmd, out []byte) ([]byte, bool) {
		runs++
		return append(out, make([]byte, InboxReplyKept+1)...), false
	}, func() int64 { return 7 }, func(sender, seq uint64, off int64, reply []byte) { answers = append(answers, string(reply)) })
	req := AppendRequest(nil, 1, 1, 0, false, []byte("*2\r\n$4\r\nLPOP\r\n$1\r\nl\r\n"))
	in.Handle(req, 1)
	in.Handle(req, 2)
	if runs != 1 || len(answers) != 2 || len(answers[0]) != InboxReplyKept+1 || answers[1] != replyNotKept {
		t.Fatalf("runs %d, answers of %d bytes: want 1 run, the whole reply first, then the not-kept error", runs, len(answers))
	}
}

// TestForwardedInboxRunsOnce: the primary runs each forwarded write once,
// however often it is sent (the replica sends again when it heard no
// answer), and answers each copy with the first run's reply and offset; a
// write held (CLIENT PAUSE) runs once writes are allowed, in order, and its
// repeats meanwhile are not answered.
func TestForwardedInboxRunsOnce(t *testing.T) {
	var offset int64
	runs := 0
	held := false
	type ans struct {
		sender, seq uint64
		offset      int64
		reply       string
	}
	var answers []ans
	in := NewInbox(func(sender uint64, db int, resp3 bool, cmd, out []byte) ([]byte, bool) {
		if held {
			return out, true
		}
		runs++
		offset += int64(len(cmd))
		return append(out, ':', byte('0'+runs), '\r', '\n'), false
	}, func() int64 { return offset }, func(sender, seq uint64, off int64, reply []byte) {
		answers = append(answers, ans{sender, seq, off, string(reply)})
	})
	cmd := []byte("*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n")
	req := AppendRequest(nil, 9, 1, 0, false, cmd)
	in.Handle(req, 1)
	in.Handle(req, 2)
	in.Handle(req, 3)
	if runs != 1 || len(answers) != 3 {
		t.Fatalf("one request sent 3 times: ran %d times, %d answers; want 1 run, 3 answers", runs, len(answers))
	}
	for _, a := range answers {
		if a != (ans{9, 1, int64(len(cmd)), ":1\r\n"}) {
			t.Fatalf("answer %+v, want the first run's for every copy", a)
		}
	}
	// Another sender's seq 1 is another request.
	in.Handle(AppendRequest(nil, 10, 1, 0, false, cmd), 4)
	if runs != 2 {
		t.Fatalf("another sender's request 1: runs %d, want 2", runs)
	}
	held = true
	answers = answers[:0]
	in.Handle(AppendRequest(nil, 9, 2, 0, false, cmd), 5)
	in.Handle(AppendRequest(nil, 9, 3, 0, false, cmd), 5)
	in.Handle(AppendRequest(nil, 9, 2, 0, false, cmd), 6)
	if runs != 2 || len(answers) != 0 {
		t.Fatalf("while writes are held: runs %d, answers %v; want nothing run or answered", runs, answers)
	}
	held = false
	if n := in.Drain(); n != 2 || runs != 4 || len(answers) != 2 || answers[0].seq != 2 || answers[1].seq != 3 {
		t.Fatalf("writes allowed again: drained %d, runs %d, answers %+v; want requests 2 then 3 run once each", n, runs, answers)
	}
	var st InboxStats
	in.Stats(&st)
	if st.Ran != 4 || st.Repeated != 2 || st.Requests != 7 {
		t.Fatalf("stats %+v: want 4 ran, 2 repeated, 7 requests", st)
	}
}

// TestInboxHoldsMoreThanItRemembers: more of one sender's requests held
// (a long CLIENT PAUSE) than the inbox remembers answers for are all
// taken, kept, and run in order once writes are allowed.
func TestInboxHoldsMoreThanItRemembers(t *testing.T) {
	held := true
	runs := 0
	var seqs []uint64
	in := NewInbox(func(sender uint64, db int, resp3 bool, cmd, out []byte) ([]byte, bool) {
		if held {
			return out, true
		}
		runs++
		return append(out, "+OK\r\n"...), false
	}, func() int64 { return int64(runs) }, func(sender, seq uint64, off int64, reply []byte) {
		seqs = append(seqs, seq)
	})
	cmd := []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n")
	const n = InboxRemembered + 10
	done := make(chan struct{})
	go func() {
		defer close(done)
		for seq := uint64(1); seq <= n; seq++ {
			in.Handle(AppendRequest(nil, 9, seq, 0, false, cmd), int64(seq))
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("Handle of %d held requests from one sender did not return within 10 s (InboxRemembered %d)", n, InboxRemembered)
	}
	held = false
	if got := in.Drain(); got != n || runs != n {
		t.Fatalf("writes allowed again: drained %d, ran %d; want %d", got, runs, n)
	}
	for i, seq := range seqs {
		if seq != uint64(i+1) {
			t.Fatalf("answer %d is for request %d, want %d (in order)", i, seq, i+1)
		}
	}
}
