package aeronfeed

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/replication"
)

func newIPCPublisher(t *testing.T, maxPending int) (*Publisher, *replication.State) {
	t.Helper()
	st := replication.NewState(0)
	st.CreateBacklog(true)
	p, err := NewPublisher(PublisherOptions{Channel: "aeron:ipc?term-length=64k", MaxPending: maxPending,
		Position: func() (string, int64) { return st.ID, st.Offset }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, st
}

// TestPublisherFramesCarryTheStream: what a subscriber receives, frame by
// frame, is the stream fed, each frame at the offset its header says, in
// frames no larger than MaxPayload, with heartbeats at the current offset
// when the stream is quiet.
func TestPublisherFramesCarryTheStream(t *testing.T) {
	p, st := newIPCPublisher(t, 0)
	sub, err := p.media.Client.AddSubscription("aeron:ipc?term-length=64k", DefaultStreamID)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !sub.IsConnected() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	var fed, got []byte
	var msg []byte
	heartbeats := 0
	var now int64
	for i := 0; i < 3000; i++ {
		b := make([]byte, rng.IntN(3*MaxPayload/2)*(rng.IntN(20)/19)+rng.IntN(300))
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		p.StreamFeed(st.ID, st.Offset, b)
		st.Feed(b)
		fed = append(fed, b...)
		if i%7 == 0 {
			now += int64(time.Millisecond)
			p.Poll(now)
		}
		for {
			m, _, ok := sub.NextMessage(msg[:0])
			if !ok {
				break
			}
			msg = m[:0]
			var f Frame
			if err := Parse(m, &f); err != nil {
				t.Fatal(err)
			}
			if string(f.ID) != st.ID {
				t.Fatalf("frame id %q, want %q", f.ID, st.ID)
			}
			if f.Offset != int64(len(got)) {
				t.Fatalf("frame at offset %d, have %d bytes", f.Offset, len(got))
			}
			if len(f.Payload) > MaxPayload {
				t.Fatalf("frame of %d bytes, more than MaxPayload", len(f.Payload))
			}
			if f.Kind == KindHeartbeat {
				heartbeats++
			}
			got = append(got, f.Payload...)
		}
	}
	for end := time.Now().Add(10 * time.Second); (len(got) < len(fed) || heartbeats == 0) && time.Now().Before(end); {
		time.Sleep(100 * time.Microsecond)
		now += int64(time.Millisecond)
		p.Poll(now)
		for {
			m, _, ok := sub.NextMessage(msg[:0])
			if !ok {
				break
			}
			msg = m[:0]
			var f Frame
			if err := Parse(m, &f); err != nil || f.Offset != int64(len(got)) {
				t.Fatalf("frame at %d (%v), have %d", f.Offset, err, len(got))
			}
			if f.Kind == KindHeartbeat {
				heartbeats++
			}
			got = append(got, f.Payload...)
		}
	}
	if !bytes.Equal(got, fed) {
		t.Fatalf("received %d bytes, fed %d, or they differ", len(got), len(fed))
	}
	if heartbeats == 0 {
		t.Fatal("no heartbeat on a quiet stream")
	}
	var s PublisherStats
	p.Stats(&s)
	if s.Offset != st.Offset || s.DroppedBytes != 0 {
		t.Fatalf("stats %+v, offset want %d", s, st.Offset)
	}
}

// TestPublisherNeverWaits: a subscriber that never reads back-pressures
// the publication; Poll returns at once every time, the pending bytes stay
// under MaxPending, and what could not be kept is dropped and counted.
func TestPublisherNeverWaits(t *testing.T) {
	const maxPending = 1 << 20
	p, st := newIPCPublisher(t, maxPending)
	sub, err := p.media.Client.AddSubscription("aeron:ipc?term-length=64k", DefaultStreamID)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !sub.IsConnected() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	b := bytes.Repeat([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"), 100)
	var slowest time.Duration
	for i := 0; i < 2000; i++ {
		p.StreamFeed(st.ID, st.Offset, b)
		st.Feed(b)
		t0 := time.Now()
		p.Poll(int64(i))
		slowest = max(slowest, time.Since(t0))
		var s PublisherStats
		p.Stats(&s)
		if s.Pending > maxPending {
			t.Fatalf("%d bytes pending, more than MaxPending", s.Pending)
		}
	}
	var s PublisherStats
	p.Stats(&s)
	if s.BackPressured == 0 || s.DroppedBytes == 0 || s.Drops == 0 {
		t.Fatalf("a subscriber that never reads: stats %+v, want back-pressure and drops", s)
	}
	if slowest > 100*time.Millisecond {
		t.Errorf("the slowest Poll took %v", slowest)
	}
	t.Logf("stats %+v, slowest Poll %v", s, slowest)
}

// TestFeedAndPollAllocateNothing: once its buffers have grown, feeding the
// stream and offering it allocate nothing (the store loop's hot path).
func TestFeedAndPollAllocateNothing(t *testing.T) {
	p, st := newIPCPublisher(t, 0)
	sub, err := p.media.Client.AddSubscription("aeron:ipc?term-length=64k", DefaultStreamID)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !sub.IsConnected() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	b := []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n")
	var msg []byte
	now := int64(0)
	step := func() {
		for range 10 {
			p.StreamFeed(st.ID, st.Offset, b)
			st.Feed(b)
		}
		now += int64(time.Millisecond)
		p.Poll(now)
		for {
			m, _, ok := sub.NextMessage(msg[:0])
			if !ok {
				break
			}
			msg = m[:0]
		}
	}
	for range 100 {
		step()
	}
	if n := testing.AllocsPerRun(200, step); n != 0 {
		t.Fatalf("%.1f allocations per feed and poll", n)
	}
}

// TestPublisherStandby: on standby (the node follows a primary) nothing
// is kept or offered, not even a heartbeat; off standby (promoted) the
// stream fed from then on is published again.
func TestPublisherStandby(t *testing.T) {
	p, st := newIPCPublisher(t, 0)
	sub, err := p.media.Client.AddSubscription("aeron:ipc?term-length=64k", DefaultStreamID)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !sub.IsConnected() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	p.SetStandby(true)
	var now int64
	for range 50 {
		b := bytes.Repeat([]byte("x"), 100)
		p.StreamFeed(st.ID, st.Offset, b)
		st.Feed(b)
		now += int64(time.Second)
		p.Poll(now)
	}
	var ps PublisherStats
	p.Stats(&ps)
	if ps.Pending != 0 || ps.Frames != 0 || ps.Heartbeats != 0 {
		t.Fatalf("on standby: pending %d, frames %d, heartbeats %d; want nothing", ps.Pending, ps.Frames, ps.Heartbeats)
	}
	if _, _, ok := sub.NextMessage(nil); ok {
		t.Fatal("on standby: a subscriber received a message")
	}
	p.SetStandby(false)
	b := []byte("after promotion")
	p.StreamFeed(st.ID, st.Offset, b)
	st.Feed(b)
	p.Poll(now + 1)
	var f Frame
	deadline = time.Now().Add(10 * time.Second)
	for {
		m, _, ok := sub.NextMessage(nil)
		if ok {
			if err := Parse(m, &f); err != nil {
				t.Fatal(err)
			}
			if string(f.Payload) != string(b) || f.End() != st.Offset {
				t.Fatalf("after standby: frame %q ending at %d, want %q ending at %d", f.Payload, f.End(), b, st.Offset)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("after standby: nothing published")
		}
		time.Sleep(time.Millisecond)
	}
}
