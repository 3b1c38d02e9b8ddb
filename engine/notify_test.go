package engine

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/store"
)

// events renders what a RESP2 pattern subscriber received as
// "channel=message" lines.
func events(t *testing.T, b []byte) []string {
	t.Helper()
	msgs, err := splitReplies(b)
	if err != nil {
		t.Fatalf("subscriber's bytes: %v", err)
	}
	var out []string
	for _, m := range msgs {
		n, _, err := parseNode(m)
		if err != nil || len(n.elems) != 4 {
			t.Fatalf("not a pmessage: %q", m)
		}
		out = append(out, string(n.elems[2].str)+"="+string(n.elems[3].str))
	}
	return out
}

// TestNotifyServedBlockedPop: a BLPOP parked on an empty list and served
// by another client's RPUSH publishes the pop (and the emptied list's del)
// after the push, as Redis serves blocked clients after the command.
func TestNotifyServedBlockedPop(t *testing.T) {
	e, _ := newEngine(t, Options{NotifyKeyspaceEvents: "Elg"})
	sub, box := subscriber(e)
	serve(t, e, sub, "PSUBSCRIBE", "__keyevent@*")
	box.got = box.got[:0]
	blocked, _ := subscriber(e)
	serve(t, e, blocked, "BLPOP", "l", "0")
	w := e.Open(proto.RESP, nil)
	serve(t, e, w, "RPUSH", "l", "a")
	want := []string{"__keyevent@0__:rpush=l", "__keyevent@0__:lpop=l", "__keyevent@0__:del=l"}
	if got := events(t, box.got); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("events %q, want %q", got, want)
	}
	// BLMOVE served later: the push to the destination, then the pop.
	box.got = box.got[:0]
	serve(t, e, blocked, "BLMOVE", "src", "dst", "LEFT", "RIGHT", "0")
	serve(t, e, w, "LPUSH", "src", "x")
	want = []string{"__keyevent@0__:lpush=src", "__keyevent@0__:rpush=dst", "__keyevent@0__:lpop=src", "__keyevent@0__:del=src"}
	if got := events(t, box.got); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("BLMOVE: events %q, want %q", got, want)
	}
}

// TestNotifyExpiredAndEvicted: keys the store removes on its own, by its
// active expiry (Tick) and by eviction for maxmemory, are "expired" and
// "evicted" events.
func TestNotifyExpiredAndEvicted(t *testing.T) {
	e, clock := newEngine(t, Options{NotifyKeyspaceEvents: "Exe"})
	sub, box := subscriber(e)
	serve(t, e, sub, "PSUBSCRIBE", "*")
	box.got = box.got[:0]
	w := e.Open(proto.RESP, nil)
	serve(t, e, w, "SET", "k", "v", "PX", "100")
	clock.Advance(time.Second)
	for i := 0; i < 10 && len(box.got) == 0; i++ {
		e.Tick(1000)
	}
	if got := events(t, box.got); len(got) != 1 || got[0] != "__keyevent@0__:expired=k" {
		t.Fatalf("active expiry: events %q", got)
	}
	box.got = box.got[:0]
	serve(t, e, w, "CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
	serve(t, e, w, "CONFIG", "SET", "maxmemory", "1mb")
	val := strings.Repeat("v", 1000)
	for i := 0; i < 3000; i++ {
		serve(t, e, w, "SET", "key:"+strconv.Itoa(i), val)
		e.Tick(100)
	}
	got := events(t, box.got)
	if len(got) == 0 {
		t.Fatal("3 MB written under maxmemory 1mb: no evicted event")
	}
	for _, g := range got {
		if !strings.HasPrefix(g, "__keyevent@0__:evicted=key:") {
			t.Fatalf("eviction published %q", g)
		}
	}
}

// TestNotifyAllocs: a SET with notifications off, on with nobody
// subscribed, and on with a pattern subscriber allocates nothing per
// request once warm.
func TestNotifyAllocs(t *testing.T) {
	for _, tc := range []struct {
		flags string
		sub   bool
	}{{"", false}, {"KEA", false}, {"KEA", true}} {
		st, err := store.New(store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		e := NewEngine(st, Options{NotifyKeyspaceEvents: tc.flags})
		var box *inbox
		if tc.sub {
			var s *Session
			s, box = subscriber(e)
			serve(t, e, s, "PSUBSCRIBE", "__key*")
		}
		w := e.Open(proto.RESP, nil)
		in := resp.AppendCommandString(nil, "SET", "key", "value")
		out := make([]byte, 0, 64)
		for i := 0; i < 3; i++ {
			_, out, _ = e.ServeStream(w, in, out[:0])
		}
		allocs := testing.AllocsPerRun(500, func() {
			if box != nil {
				box.got = box.got[:0]
			}
			_, out, _ = e.ServeStream(w, in, out[:0])
		})
		if string(out) != "+OK\r\n" {
			t.Fatalf("%q: SET answered %q", tc.flags, out)
		}
		if allocs != 0 {
			t.Errorf("notify-keyspace-events %q, subscriber %v: SET allocates %.1f times", tc.flags, tc.sub, allocs)
		}
		if tc.sub && !strings.Contains(string(box.got), "__keyevent@0__:set") {
			t.Errorf("the subscriber received %q", box.got)
		}
	}
}

// BenchmarkSetNotify: SET with notifications off, on with no subscriber,
// and on with a subscriber to every event.
func BenchmarkSetNotify(b *testing.B) {
	for _, tc := range []struct {
		name, flags string
		sub         bool
	}{{"off", "", false}, {"on-nobody", "KEA", false}, {"on-subscribed", "KEA", true}} {
		b.Run(tc.name, func(b *testing.B) {
			st, err := store.New(store.Options{})
			if err != nil {
				b.Fatal(err)
			}
			e := NewEngine(st, Options{NotifyKeyspaceEvents: tc.flags})
			var box *inbox
			if tc.sub {
				var s *Session
				s, box = subscriber(e)
				serve(b, e, s, "PSUBSCRIBE", "__key*")
			}
			w := e.Open(proto.RESP, nil)
			in := resp.AppendCommandString(nil, "SET", "key", "value")
			out := make([]byte, 0, 64)
			b.ReportAllocs()
			for b.Loop() {
				if box != nil {
					box.got = box.got[:0]
				}
				_, out, _ = e.ServeStream(w, in, out[:0])
			}
		})
	}
}
