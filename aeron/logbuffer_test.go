package aeron

import (
	"bytes"
	"encoding/binary"
	"sync"
	"testing"

	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
)

const testTermLength = 64 * 1024

func payload(i, size int) []byte {
	b := make([]byte, size)
	for k := range b {
		b[k] = byte(i*7 + k)
	}
	if size >= 4 {
		binary.LittleEndian.PutUint32(b, uint32(i))
	}
	return b
}

// offerRetry offers until it succeeds, playing the driver's cleaning role
// on every rotation.
func offerRetry(t *testing.T, l *logBuffer, offer func([]byte) int64, msg []byte) int64 {
	t.Helper()
	for tries := 0; tries < 10; tries++ {
		r := offer(msg)
		if r > 0 {
			return r
		}
		if r != AdminAction {
			t.Fatalf("offer: %s", StatusString(r))
		}
		driverClean(l)
	}
	t.Fatal("offer kept returning ADMIN_ACTION")
	return 0
}

func TestTermAppenderAndReaderAcrossRotations(t *testing.T) {
	for _, exclusive := range []bool{false, true} {
		name := "concurrent"
		if exclusive {
			name = "exclusive"
		}
		t.Run(name, func(t *testing.T) {
			// A non-zero initial term id checks the term count arithmetic.
			l := newTestLog(testTermLength, 1408, 1<<31-3)
			values := testCounters(1 << 62)
			var offer func([]byte) int64
			var position func() int64
			if exclusive {
				p := newTestExclusive(l, values)
				offer, position = p.Offer, p.Position
			} else {
				p := newTestPublication(l, values)
				offer, position = p.Offer, p.Position
			}
			img := newTestImage(l, values)
			maxPayload := 1408 - logbuffer.HeaderLength
			got := 0
			var lastPos int64
			asm := NewFragmentAssembler(func(buf []byte, h *Header) {
				size := 1 + (got*53)%700
				if got%10 == 0 {
					size = 2*maxPayload + 100
				}
				if !bytes.Equal(buf, payload(got, size)) {
					t.Fatalf("message %d corrupted (len %d want %d)", got, len(buf), size)
				}
				if h.SessionID() != testSessionID || h.StreamID() != testStreamID || h.Type() != logbuffer.FrameTypeData {
					t.Fatalf("header fields session %d stream %d type %d", h.SessionID(), h.StreamID(), h.Type())
				}
				lastPos = h.Position()
				got++
			}, 0)
			handler := asm.OnFragment
			const n = 1500 // about 10 terms of 64 KiB, so every partition is reused
			for i := 0; i < n; i++ {
				size := 1 + (i*53)%700
				if i%10 == 0 {
					size = 2*maxPayload + 100
				}
				pos := offerRetry(t, l, offer, payload(i, size))
				if pos != position() {
					t.Fatalf("offer returned %d, Position() %d", pos, position())
				}
				// A poll stops at a term's end (after padding); poll on until
				// the reader reaches the publisher.
				for k := 0; img.Position() < pos && k < 10; k++ {
					img.Poll(handler, 100)
				}
				if got != i+1 {
					t.Fatalf("after offer %d the reader has %d messages", i, got)
				}
				if lastPos != pos || img.Position() != pos {
					t.Fatalf("offer position %d, header position %d, image position %d", pos, lastPos, img.Position())
				}
			}
			if tc := l.activeTermCount(); tc < 8 {
				t.Fatalf("only %d rotations", tc)
			}
		})
	}
}

func TestEndOfTermPadding(t *testing.T) {
	l := newTestLog(testTermLength, 1408, 5)
	values := testCounters(1 << 62)
	p := newTestPublication(l, values)
	msg := make([]byte, 1000) // 1032 → 1056 aligned
	for p.Offer(msg) > 0 {
	}
	// 62 frames fill 65472 bytes; the 63rd did not fit: 64 bytes of padding.
	off := 62 * 1056
	term := l.terms[0]
	if got := int(shm.GetInt32(term, off)); got != testTermLength-off {
		t.Fatalf("padding frame length %d, want %d", got, testTermLength-off)
	}
	if shm.GetUint16(term, off+logbuffer.FrameTypeOffset) != logbuffer.FrameTypePad || shm.GetInt32(term, off+logbuffer.FrameTermIDOffset) != 5 {
		t.Fatal("padding frame header wrong")
	}
	if l.activeTermCount() != 1 || logbuffer.TermID(l.rawTail(1)) != 6 {
		t.Fatalf("rotation: term count %d, next tail term %d", l.activeTermCount(), logbuffer.TermID(l.rawTail(1)))
	}
	// The reader skips the padding and moves into the next term.
	img := newTestImage(l, values)
	frames := 0
	for img.Poll(func([]byte, *Header) { frames++ }, 1000) > 0 {
	}
	if frames != 62 || img.Position() != testTermLength {
		t.Fatalf("read %d frames to position %d", frames, img.Position())
	}
	if r := p.Offer(msg); r != int64(testTermLength+1056) {
		t.Fatalf("offer in the second term returned %d", r)
	}
}

func TestBackPressureStatuses(t *testing.T) {
	l := newTestLog(testTermLength, 1408, 0)
	values := testCounters(0)
	p := newTestPublication(l, values)
	x := newTestExclusive(l, values)
	if r := p.Offer([]byte("x")); r != BackPressured {
		t.Fatalf("limit 0, connected: %s", StatusString(r))
	}
	if r := x.Offer([]byte("x")); r != BackPressured {
		t.Fatalf("exclusive limit 0, connected: %s", StatusString(r))
	}
	shm.PutInt32(l.meta, logbuffer.IsConnectedOffset, 0)
	if r := p.Offer([]byte("x")); r != NotConnected {
		t.Fatalf("not connected: %s", StatusString(r))
	}
	var c BufferClaim
	if r := p.TryClaim(8, &c); r != NotConnected {
		t.Fatalf("claim not connected: %s", StatusString(r))
	}
	shm.PutInt64(values, 0, 1<<62)
	if r := p.Offer([]byte("x")); r != 64 {
		t.Fatalf("offer with room: %s", StatusString(r))
	}
	p.closed.Store(true)
	if r := p.Offer([]byte("x")); r != Closed {
		t.Fatalf("closed: %s", StatusString(r))
	}
	// The last term of the stream: offering past its end is
	// MAX_POSITION_EXCEEDED.
	l2 := newTestLog(testTermLength, 1408, 0)
	last := int32(1<<31 - 1)
	shm.PutInt64(l2.meta, logbuffer.TermTailCountersOffset+8*(int(last)%3), logbuffer.PackTail(last, testTermLength-64))
	shm.PutInt32(l2.meta, logbuffer.ActiveTermCountOffset, last)
	v2 := testCounters(logbuffer.MaxPossiblePosition(testTermLength))
	p2 := newTestPublication(l2, v2)
	if r := p2.Offer(make([]byte, 100)); r != MaxPositionExceeded {
		t.Fatalf("past the max position: %s", StatusString(r))
	}
	shm.PutInt64(v2, 0, p2.Position())
	if r := p2.Offer(make([]byte, 100)); r != MaxPositionExceeded {
		t.Fatalf("at the limit near the max position: %s", StatusString(r))
	}
}

func TestTryClaimCommitAbort(t *testing.T) {
	for _, exclusive := range []bool{false, true} {
		l := newTestLog(testTermLength, 1408, 0)
		values := testCounters(1 << 62)
		var claim func(int, *BufferClaim) int64
		if exclusive {
			claim = newTestExclusive(l, values).TryClaim
		} else {
			claim = newTestPublication(l, values).TryClaim
		}
		img := newTestImage(l, values)
		var c BufferClaim
		if r := claim(5, &c); r != 64 {
			t.Fatalf("claim: %s", StatusString(r))
		}
		copy(c.Buffer(), "hello")
		c.SetReservedValue(42)
		// Not committed: invisible.
		if n := img.Poll(func([]byte, *Header) {}, 10); n != 0 {
			t.Fatal("uncommitted claim visible")
		}
		c.Commit()
		var got []string
		var rv int64
		h := func(b []byte, hd *Header) { got = append(got, string(b)); rv = hd.ReservedValue() }
		img.Poll(h, 10)
		if len(got) != 1 || got[0] != "hello" || rv != 42 {
			t.Fatalf("got %q reserved %d", got, rv)
		}
		if claim(3, &c) <= 0 {
			t.Fatal("second claim failed")
		}
		c.Abort()
		if claim(3, &c) <= 0 {
			t.Fatal("third claim failed")
		}
		copy(c.Buffer(), "abc")
		c.Commit()
		got = nil
		img.Poll(h, 10)
		if len(got) != 1 || got[0] != "abc" || img.Position() != 192 {
			t.Fatalf("after abort got %q at %d", got, img.Position())
		}
	}
}

func TestVectoredOffer(t *testing.T) {
	l := newTestLog(testTermLength, 1408, 0)
	values := testCounters(1 << 62)
	p := newTestPublication(l, values)
	img := newTestImage(l, values)
	big := bytes.Repeat([]byte("z"), 3000)
	cases := [][][]byte{
		{[]byte("ab"), []byte("cd")},
		{[]byte("a"), []byte("b"), []byte("c")},
		{big[:1000], big[1000:2000], big[2000:]},
		{big[:1500], big[1500:]},
	}
	var got [][]byte
	asm := NewFragmentAssembler(func(b []byte, _ *Header) { got = append(got, append([]byte(nil), b...)) }, 0)
	for _, parts := range cases {
		if r := p.OfferVectored(parts); r <= 0 {
			t.Fatalf("offer: %s", StatusString(r))
		}
		img.Poll(asm.OnFragment, 100)
		if want := bytes.Join(parts, nil); !bytes.Equal(got[len(got)-1], want) {
			t.Fatalf("vector %d bytes arrived as %d bytes", len(want), len(got[len(got)-1]))
		}
	}
}

func TestConcurrentPublishersOneReader(t *testing.T) {
	l := newTestLog(testTermLength, 1408, 0)
	values := testCounters(1 << 62)
	p := newTestPublication(l, values)
	img := newTestImage(l, values)
	// 4 × 400 × 64-byte frames = 100 KiB: two rotations, no partition reuse,
	// so the test needs no driver cleaning while writers race.
	const writers, each = 4, 400
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			msg := make([]byte, 8)
			for i := 0; i < each; {
				binary.LittleEndian.PutUint32(msg, uint32(w))
				binary.LittleEndian.PutUint32(msg[4:], uint32(i))
				if r := p.Offer(msg); r > 0 {
					i++
				} else if r != AdminAction {
					t.Errorf("offer: %s", StatusString(r))
					return
				}
			}
		}(w)
	}
	next := make([]uint32, writers)
	total := 0
	handler := func(b []byte, _ *Header) {
		w, i := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:])
		if i != next[w] {
			t.Fatalf("writer %d: message %d after %d", w, i, next[w])
		}
		next[w]++
		total++
	}
	for total < writers*each {
		img.Poll(handler, 50)
	}
	wg.Wait()
}

func TestControlledPollActions(t *testing.T) {
	l := newTestLog(testTermLength, 1408, 0)
	values := testCounters(1 << 62)
	p := newTestPublication(l, values)
	img := newTestImage(l, values)
	for i := 0; i < 5; i++ {
		p.Offer([]byte{byte(i)})
	}
	var seen []byte
	// Abort on the first fragment: nothing consumed.
	n := img.ControlledPoll(func(b []byte, _ *Header) ControlledAction { return ActionAbort }, 10)
	if n != 0 || img.Position() != 0 {
		t.Fatalf("abort: n=%d pos=%d", n, img.Position())
	}
	// Break after the second.
	n = img.ControlledPoll(func(b []byte, _ *Header) ControlledAction {
		seen = append(seen, b[0])
		if b[0] == 1 {
			return ActionBreak
		}
		return ActionContinue
	}, 10)
	if n != 2 || img.Position() != 128 {
		t.Fatalf("break: n=%d pos=%d", n, img.Position())
	}
	// Commit stores the position mid-poll; abort later rewinds only to it.
	n = img.ControlledPoll(func(b []byte, _ *Header) ControlledAction {
		seen = append(seen, b[0])
		if b[0] == 2 {
			return ActionCommit
		}
		if img.Position() != 192 {
			t.Fatalf("commit did not store the position: %d", img.Position())
		}
		return ActionAbort
	}, 10)
	if n != 1 || img.Position() != 192 {
		t.Fatalf("commit+abort: n=%d pos=%d", n, img.Position())
	}
	img.ControlledPoll(func(b []byte, _ *Header) ControlledAction { seen = append(seen, b[0]); return ActionContinue }, 10)
	if !bytes.Equal(seen, []byte{0, 1, 2, 3, 3, 4}) || img.Position() != 320 {
		t.Fatalf("seen %v pos %d", seen, img.Position())
	}
}

func TestNextMessage(t *testing.T) {
	l := newTestLog(testTermLength, 1408, 0)
	values := testCounters(1 << 62)
	p := newTestExclusive(l, values)
	img := newTestImage(l, values)
	if _, ok := img.NextMessage(nil); ok {
		t.Fatal("message from an empty log")
	}
	big := payload(1, 5000) // 4 fragments
	p.Offer([]byte("one"))
	p.Offer(big)
	buf := make([]byte, 0, 8192)
	m, ok := img.NextMessage(buf[:0])
	if !ok || string(m) != "one" {
		t.Fatalf("got %q %v", m, ok)
	}
	m, ok = img.NextMessage(buf[:0])
	if !ok || !bytes.Equal(m, big) {
		t.Fatalf("fragmented message: ok=%v len=%d", ok, len(m))
	}
	// An incomplete fragmented message is not consumed: claim the space by
	// hand and leave the last fragment uncommitted.
	pos := img.Position()
	p.Offer(big)
	term := l.terms[0]
	lastFrag := int(pos) + 3*1408
	saved := shm.GetInt32(term, lastFrag)
	shm.PutInt32(term, lastFrag, 0)
	if _, ok := img.NextMessage(buf[:0]); ok || img.Position() != pos {
		t.Fatalf("incomplete message consumed (ok=%v pos=%d want %d)", ok, img.Position(), pos)
	}
	shm.PutInt32(term, lastFrag, saved)
	if m, ok := img.NextMessage(buf[:0]); !ok || !bytes.Equal(m, big) {
		t.Fatal("completed message not delivered")
	}
	// Across padding at the end of the term.
	for img.Position() < testTermLength-2048 {
		p.Offer(make([]byte, 1000))
		img.NextMessage(buf[:0])
	}
	for i := 0; i < 3; i++ {
		for p.Offer(payload(i, 1000)) == AdminAction {
		}
	}
	for i := 0; i < 3; i++ {
		m, ok := img.NextMessage(buf[:0])
		if !ok || !bytes.Equal(m, payload(i, 1000)) {
			t.Fatalf("message %d across the term end: ok=%v", i, ok)
		}
	}
	if img.Position() < testTermLength {
		t.Fatal("did not cross into the next term")
	}
}

func TestPeekMessageAndConsume(t *testing.T) {
	l := newTestLog(testTermLength, 1408, 0)
	values := testCounters(1 << 62)
	p := newTestPublication(l, values)
	img := newTestImage(l, values)
	scratch := make([]byte, 0, 8192)
	if _, ok := img.PeekMessage(scratch); ok {
		t.Fatal("peeked a message from an empty log")
	}
	big := payload(3, 4000)
	p.Offer([]byte("first"))
	p.Offer(big)
	m, ok := img.PeekMessage(scratch)
	if !ok || string(m) != "first" || &m[0] != &l.terms[0][logbuffer.HeaderLength] {
		t.Fatalf("peek %q ok=%v (want a view into the log)", m, ok)
	}
	if m2, _ := img.PeekMessage(scratch); string(m2) != "first" || img.Position() != 0 {
		t.Fatal("peek consumed the message")
	}
	img.Consume()
	if img.Position() != 64 {
		t.Fatalf("position %d after consume", img.Position())
	}
	m, ok = img.PeekMessage(scratch)
	if !ok || !bytes.Equal(m, big) {
		t.Fatalf("fragmented peek ok=%v len=%d", ok, len(m))
	}
	img.Consume()
	img.Consume() // a second consume without a peek does nothing
	if _, ok := img.PeekMessage(scratch); ok || img.Position() != p.Position() {
		t.Fatalf("position %d, publisher at %d", img.Position(), p.Position())
	}
	allocs := testing.AllocsPerRun(100, func() {
		if p.Offer([]byte("again")) == AdminAction {
			driverClean(l)
		}
		if _, ok := img.PeekMessage(scratch); ok {
			img.Consume()
		}
	})
	if allocs != 0 {
		t.Fatalf("peek+consume allocates %.1f", allocs)
	}
}

// TestReadMessageConsumesAsItGoes: ReadMessage takes the fragments of a
// message that are there and moves the subscriber position past them
// before the last one is committed — what lets a UDP receiver's window
// open for the rest of a message longer than the window — and returns the
// message whole once its end comes; whole messages read as NextMessage
// reads them.
func TestReadMessageConsumesAsItGoes(t *testing.T) {
	l := newTestLog(testTermLength, 1408, 0)
	values := testCounters(1 << 62)
	p := newTestExclusive(l, values)
	img := newTestImage(l, values)
	var r Reassembly
	big := payload(2, 5000) // four fragments
	p.Offer([]byte("one"))
	p.Offer(big)
	p.Offer([]byte("three"))
	term := l.terms[0]
	pos := img.Position()
	m, done := img.ReadMessage(nil, &r)
	if !done || string(m) != "one" || r.InMessage() {
		t.Fatalf("first message: %q %v", m, done)
	}
	// Hold back the third fragment of the big message.
	third := int(img.Position()) + 2*1408
	saved := shm.GetInt32(term, third)
	shm.PutInt32(term, third, 0)
	buf := make([]byte, 0, 8192)
	before := img.Position()
	buf, done = img.ReadMessage(buf, &r)
	if done || !r.InMessage() || len(buf) != 2*(1408-32) || img.Position() != before+2*1408 {
		t.Fatalf("partial message: done=%v in=%v %d bytes, position %d (from %d)", done, r.InMessage(), len(buf), img.Position(), before)
	}
	shm.PutInt32(term, third, saved)
	buf, done = img.ReadMessage(buf, &r)
	if !done || !bytes.Equal(buf, big) || r.InMessage() {
		t.Fatalf("the rest of the message: done=%v %d bytes", done, len(buf))
	}
	if m, done = img.ReadMessage(nil, &r); !done || string(m) != "three" {
		t.Fatalf("third message: %q %v", m, done)
	}
	if m, done = img.ReadMessage(nil, &r); done || len(m) != 0 || img.Position() <= pos {
		t.Fatalf("nothing more: %q %v", m, done)
	}
	if a := testing.AllocsPerRun(100, func() {
		p.Offer([]byte("x"))
		buf, _ = img.ReadMessage(buf[:0], &r)
	}); a != 0 {
		t.Fatalf("%v allocations per message", a)
	}
}
