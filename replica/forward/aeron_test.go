package forward

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/engine"
)

// fakeAeron is an AeronPath that records what it was asked to send.
type fakeAeron struct {
	up   bool
	sent []uint64 // seqs, in the order offered
}

func (a *fakeAeron) ForwardUp() bool { return a.up }
func (a *fakeAeron) MaxCommand() int { return 1000 }
func (a *fakeAeron) SendRequest(seq uint64, db int, resp3 bool, cmd []byte) bool {
	a.sent = append(a.sent, seq)
	return true
}

// TestAeronPath: with the Aeron path up a write goes over it (not over
// TCP) and is counted as such; a request unanswered for DefaultResend is
// sent again with the same number; a repeated answer is ignored; with the
// path down the write goes over TCP and counts as a fallback; a path that
// goes down fails the writes in flight with an error, at once.
func TestAeronPath(t *testing.T) {
	host, port := fakePrimary(t)
	path := &fakeAeron{up: true}
	answers := map[uint64]string{}
	f, err := New(Options{
		Primary: func() (string, int, bool) { return host, port, true },
		Applied: func() int64 { return 1 << 40 },
		Done:    func(_ *engine.Session, tok uint64, reply []byte) { answers[tok] = string(reply) },
		Aeron:   path,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n")
	if !f.Forward(nil, 1, 0, false, cmd) {
		t.Fatal("write 1 not taken")
	}
	if len(path.sent) != 1 || path.sent[0] != 1 || f.inQueue != 0 {
		t.Fatalf("write 1 with the path up: sent over Aeron %v, queued for TCP %d; want seq 1 over Aeron only", path.sent, f.inQueue)
	}
	now := time.Now().UnixNano()
	f.Poll(now) // dates the request on the loop's clock
	f.Poll(now + int64(DefaultResend) - 1)
	if len(path.sent) != 1 {
		t.Fatalf("before %v without an answer: sent %v, want seq 1 once", DefaultResend, path.sent)
	}
	f.Poll(now + int64(DefaultResend))
	if len(path.sent) != 2 || path.sent[1] != 1 {
		t.Fatalf("after %v without an answer: sent %v, want seq 1 again", DefaultResend, path.sent)
	}
	f.Answer(1, 10, []byte("+OK\r\n"))
	f.Answer(1, 10, []byte("+OK\r\n")) // the answer to the repeat
	f.Poll(time.Now().UnixNano())
	if len(answers) != 1 || answers[1] != "+OK\r\n" {
		t.Fatalf("answers after the primary's answer came twice: %v, want write 1 answered +OK once", answers)
	}

	path.up = false
	if !f.Forward(nil, 2, 0, false, cmd) {
		t.Fatal("write 2 not taken")
	}
	deadline := time.Now().Add(5 * time.Second)
	for answers[2] == "" {
		if time.Now().After(deadline) {
			t.Fatal("write 2 (path down: over TCP) never answered")
		}
		f.Poll(time.Now().UnixNano())
	}
	var st Stats
	f.Stats(&st)
	if st.OverAeron != 1 || st.TCPFallbacks != 1 || st.Forwarded != 2 || len(path.sent) != 2 {
		t.Fatalf("stats %+v, sent %v: want 1 over Aeron, 1 TCP fallback, 2 forwarded, nothing more sent over Aeron", st, path.sent)
	}

	// A command longer than a request carries goes over TCP.
	big := fmt.Appendf(nil, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2000\r\n%s\r\n", strings.Repeat("x", 2000))
	path.up = true
	if !f.Forward(nil, 4, 0, false, big) {
		t.Fatal("write 4 not taken")
	}
	deadline = time.Now().Add(5 * time.Second)
	for answers[4] == "" {
		if time.Now().After(deadline) {
			t.Fatal("write 4 (too long for a request: over TCP) never answered")
		}
		f.Poll(time.Now().UnixNano())
	}
	if f.Stats(&st); st.TCPFallbacks != 2 || len(path.sent) != 2 {
		t.Fatalf("stats %+v, sent %v after a %d-byte command with MaxCommand 1000: want it over TCP (2 fallbacks)", st, path.sent, len(big))
	}

	if !f.Forward(nil, 3, 0, false, cmd) {
		t.Fatal("write 3 not taken")
	}
	path.up = false
	f.Poll(time.Now().UnixNano())
	if a := answers[3]; !strings.HasPrefix(a, "-ERR forwarded write: the Aeron path") {
		t.Fatalf("write 3 in flight when the path went down: answered %q, want the path's error at once", a)
	}
}

// TestAnswersFollowTheWrite: an answer whose offset this replica has not
// applied yet is held back until it has (the client then reads its own
// write), and given the TRYAGAIN error if it never does within the timeout.
func TestAnswersFollowTheWrite(t *testing.T) {
	path := &fakeAeron{up: true}
	var applied int64 = 100
	answers := map[uint64]string{}
	f, err := New(Options{
		Primary: func() (string, int, bool) { return "127.0.0.1", 1, true },
		Applied: func() int64 { return applied },
		Done:    func(_ *engine.Session, tok uint64, reply []byte) { answers[tok] = string(reply) },
		Aeron:   path,
		Timeout: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := []byte("*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n")
	f.Forward(nil, 1, 0, false, cmd)
	f.Forward(nil, 2, 0, false, cmd)
	f.Answer(1, 150, []byte(":1\r\n"))
	f.Answer(2, 400, []byte(":2\r\n"))
	f.Poll(time.Now().UnixNano())
	if len(answers) != 0 {
		t.Fatalf("answered %v with the replica at offset %d, before it applied the writes (150, 400)", answers, applied)
	}
	applied = 150
	f.Poll(time.Now().UnixNano())
	if answers[1] != ":1\r\n" || answers[2] != "" {
		t.Fatalf("at offset 150: answered %v, want write 1 only", answers)
	}
	time.Sleep(350 * time.Millisecond)
	f.Poll(time.Now().UnixNano())
	if !strings.HasPrefix(answers[2], "-TRYAGAIN forwarded write") {
		t.Fatalf("write 2 never applied within the timeout: answered %q, want TRYAGAIN", answers[2])
	}
}
