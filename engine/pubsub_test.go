package engine

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/cluster"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
)

// inbox is a subscriber's connection as the engine sees it: Push appends
// to got (until full is set, when it refuses), Queued reports queued.
type inbox struct {
	got    []byte
	queued int
	full   bool
	killed bool
}

func (b *inbox) conn() Conn {
	return Conn{Addr: "127.0.0.1:1", FD: 1,
		Push:   func(m []byte) bool { b.got = append(b.got, m...); return !b.full },
		Queued: func() int { return b.queued },
		Kill:   func() { b.killed = true }}
}

// subscriber opens a RESP session attached to a fresh inbox.
func subscriber(e *Engine) (*Session, *inbox) {
	s := e.Open(proto.RESP, nil)
	b := &inbox{}
	s.Attach(b.conn())
	return s, b
}

func serve(t testing.TB, e *Engine, s *Session, args ...string) string {
	t.Helper()
	_, out, _ := e.ServeStream(s, resp.AppendCommandString(nil, args...), nil)
	return string(out)
}

// TestPublishAllocs: PUBLISH to 1, 10 and 100 subscribers (RESP2 and
// RESP3, a channel and a pattern) allocates nothing per request.
func TestPublishAllocs(t *testing.T) {
	for _, n := range []int{1, 10, 100} {
		e, _ := newEngine(t, Options{})
		var boxes []*inbox
		for i := range n {
			s, b := subscriber(e)
			if i%2 == 1 {
				serve(t, e, s, "HELLO", "3")
			}
			serve(t, e, s, "SUBSCRIBE", "ch")
			serve(t, e, s, "PSUBSCRIBE", "c*")
			boxes = append(boxes, b)
		}
		pub := e.Open(proto.RESP, nil)
		in := resp.AppendCommandString(nil, "PUBLISH", "ch", "0123456789abcdef")
		want := fmt.Sprintf(":%d\r\n", 2*n)
		out := make([]byte, 0, 64)
		allocs := testing.AllocsPerRun(200, func() {
			for _, b := range boxes {
				b.got = b.got[:0]
			}
			_, out, _ = e.ServeStream(pub, in, out[:0])
		})
		if string(out) != want {
			t.Fatalf("%d subscribers: PUBLISH answered %q, want %q", n, out, want)
		}
		if allocs != 0 {
			t.Errorf("%d subscribers: PUBLISH allocates %.1f times per request", n, allocs)
		}
		if got := string(boxes[len(boxes)-1].got); n > 1 && (!strings.HasPrefix(got, ">3\r\n$7\r\nmessage\r\n") || !strings.Contains(got, ">4\r\n$8\r\npmessage\r\n")) {
			t.Errorf("%d subscribers: a RESP3 subscriber received %q", n, got)
		}
	}
}

// BenchmarkPublish: PUBLISH of a 16-byte message to N subscribers of a
// channel, through ServeStream, each subscriber's Push copying the
// message as the socket transport does.
func BenchmarkPublish(b *testing.B) {
	for _, n := range []int{1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) {
			e, _ := newEngine(b, Options{})
			var boxes []*inbox
			for range n {
				s, box := subscriber(e)
				serve(b, e, s, "SUBSCRIBE", "ch")
				boxes = append(boxes, box)
			}
			pub := e.Open(proto.RESP, nil)
			in := resp.AppendCommandString(nil, "PUBLISH", "ch", "0123456789abcdef")
			out := make([]byte, 0, 64)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				for _, box := range boxes {
					box.got = box.got[:0]
				}
				_, out, _ = e.ServeStream(pub, in, out[:0])
			}
			if want := fmt.Sprintf(":%d\r\n", n); string(out) != want {
				b.Fatalf("PUBLISH answered %q, want %q", out, want)
			}
		})
	}
}

// TestPubSubSlowSubscriber: a subscriber whose queued output reaches the
// hard limit, or stays over the soft limit longer than its seconds, or
// whose transport refuses a push, is disconnected after the fan-out and
// no longer counted; the others keep receiving.
func TestPubSubSlowSubscriber(t *testing.T) {
	e, clock := newEngine(t, Options{})
	admin := e.Open(proto.RESP, nil)
	if got := serve(t, e, admin, "CONFIG", "SET", "client-output-buffer-limit", "pubsub 1000 100 2"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET: %q", got)
	}
	hard, hb := subscriber(e)
	soft, sb := subscriber(e)
	refused, rb := subscriber(e)
	ok, ob := subscriber(e)
	for _, s := range []*Session{hard, soft, refused, ok} {
		serve(t, e, s, "SUBSCRIBE", "ch")
	}
	pub := e.Open(proto.RESP, nil)
	if got := serve(t, e, pub, "PUBLISH", "ch", "m"); got != ":4\r\n" {
		t.Fatalf("PUBLISH: %q", got)
	}
	hb.queued, sb.queued, rb.full = 1000, 500, true
	if list := serve(t, e, admin, "CLIENT", "LIST", "ID", itoa(int(soft.ID))); !strings.Contains(list, " omem=500 ") {
		t.Fatalf("CLIENT LIST of a subscriber with 500 bytes queued: %q, want omem=500", list)
	}
	if got := serve(t, e, pub, "PUBLISH", "ch", "m"); got != ":4\r\n" {
		t.Fatalf("PUBLISH: %q", got)
	}
	if !hb.killed || !rb.killed || sb.killed || ob.killed {
		t.Fatalf("after one PUBLISH over the limits: hard killed %v, refused killed %v, soft killed %v (want not yet), ok killed %v",
			hb.killed, rb.killed, sb.killed, ob.killed)
	}
	if got := serve(t, e, pub, "PUBLISH", "ch", "m"); got != ":2\r\n" {
		t.Fatalf("PUBLISH after the cut: %q, want :2", got)
	}
	clock.Advance(3 * time.Second)
	serve(t, e, pub, "PUBLISH", "ch", "m")
	if !sb.killed || ob.killed {
		t.Fatalf("3 s over the soft limit (2 s allowed): soft killed %v, ok killed %v", sb.killed, ob.killed)
	}
	if got := serve(t, e, pub, "PUBSUB", "NUMSUB", "ch"); got != "*2\r\n$2\r\nch\r\n:1\r\n" {
		t.Fatalf("PUBSUB NUMSUB ch: %q", got)
	}
	if n := strings.Count(string(ob.got), "message"); n != 4 {
		t.Fatalf("the reading subscriber got %d messages, want 4", n)
	}
	if info := serve(t, e, pub, "INFO", "stats"); !strings.Contains(info, "goblin_pubsub_output_limit_disconnections:3\r\n") {
		t.Fatalf("INFO stats does not count the three cuts: %q", info)
	}
}

// TestPubSubNeedsPush: a session whose transport cannot send out of turn
// (the ring, Aeron) cannot subscribe; it can publish.
func TestPubSubNeedsPush(t *testing.T) {
	e, _ := newEngine(t, Options{})
	s := e.Open(proto.RESP, nil)
	for _, c := range [][]string{{"SUBSCRIBE", "a"}, {"PSUBSCRIBE", "a*"}, {"SSUBSCRIBE", "a"}} {
		want := "-ERR " + c[0] + " needs a socket connection (this transport cannot send to a client out of turn)\r\n"
		if got := serve(t, e, s, c...); got != want {
			t.Errorf("%q: %q, want %q", c, got, want)
		}
	}
	if got := serve(t, e, s, "PUBLISH", "a", "m"); got != ":0\r\n" {
		t.Errorf("PUBLISH: %q", got)
	}
	if got := serve(t, e, s, "UNSUBSCRIBE"); got != "*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n" {
		t.Errorf("UNSUBSCRIBE: %q", got)
	}
}

// TestPubSubClose: a closed session's subscriptions are gone; CLIENT
// LIST shows sub, psub, ssub and flag P; INFO stats the counts.
func TestPubSubClose(t *testing.T) {
	e, _ := newEngine(t, Options{})
	s, _ := subscriber(e)
	serve(t, e, s, "SUBSCRIBE", "a", "b")
	serve(t, e, s, "PSUBSCRIBE", "p*")
	serve(t, e, s, "SSUBSCRIBE", "x")
	other := e.Open(proto.RESP, nil)
	list := serve(t, e, other, "CLIENT", "LIST", "TYPE", "pubsub")
	if !strings.Contains(list, " flags=P ") || !strings.Contains(list, " sub=2 psub=1 ssub=1 ") {
		t.Fatalf("CLIENT LIST TYPE pubsub: %q", list)
	}
	if info := serve(t, e, other, "INFO", "stats"); !strings.Contains(info, "pubsub_channels:2\r\npubsub_patterns:1\r\npubsubshard_channels:1\r\n") {
		t.Fatalf("INFO stats: %q", info)
	}
	e.Close(s)
	if got := serve(t, e, other, "PUBLISH", "a", "m"); got != ":0\r\n" {
		t.Fatalf("PUBLISH after Close: %q", got)
	}
	if info := serve(t, e, other, "INFO", "stats"); !strings.Contains(info, "pubsub_channels:0\r\npubsub_patterns:0\r\npubsubshard_channels:0\r\n") {
		t.Fatalf("INFO stats after Close: %q", info)
	}
}

// TestPubSubCluster: in cluster mode SPUBLISH and SSUBSCRIBE route their
// shard channel as a key (-MOVED, -CROSSSLOT), SUNSUBSCRIBE without
// channels and PUBLISH are served by any node.
func TestPubSubCluster(t *testing.T) {
	e := clusterEngine(t, ClusterOptions{})
	s, box := subscriber(e)
	pub := e.Open(proto.RESP, nil)
	mine := keyIn("c", func(x uint16) bool { return x < 8192 })
	theirs := keyIn("c", func(x uint16) bool { return x >= 8192 && x < 16383 })
	slot := itoa(int(cluster.Slot([]byte(theirs))))
	moved := "-MOVED " + slot + " 127.0.0.1:7002\r\n"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"SPUBLISH", theirs, "m"}, moved},
		{[]string{"SSUBSCRIBE", theirs}, moved},
		{[]string{"SSUBSCRIBE", mine, theirs}, "-CROSSSLOT Keys in request don't hash to the same slot\r\n"},
		{[]string{"SSUBSCRIBE", mine}, "*3\r\n$10\r\nssubscribe\r\n$" + itoa(len(mine)) + "\r\n" + mine + "\r\n:1\r\n"},
		{[]string{"SPUBLISH", mine, "m"}, ":1\r\n"},
		{[]string{"PUBLISH", theirs, "m"}, ":0\r\n"},
		{[]string{"SUNSUBSCRIBE", theirs}, moved},
		{[]string{"SUNSUBSCRIBE"}, "*3\r\n$12\r\nsunsubscribe\r\n$" + itoa(len(mine)) + "\r\n" + mine + "\r\n:0\r\n"},
	} {
		who := s
		if strings.HasSuffix(c.args[0], "PUBLISH") {
			who = pub
		}
		if got := serve(t, e, who, c.args...); got != c.want {
			t.Errorf("%q: %q, want %q", c.args, got, c.want)
		}
	}
	if want := "*3\r\n$8\r\nsmessage\r\n"; !strings.HasPrefix(string(box.got), want) {
		t.Errorf("the shard subscriber received %q", box.got)
	}
}
