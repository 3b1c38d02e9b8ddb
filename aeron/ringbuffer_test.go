package aeron

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"sync"
	"testing"

	"github.com/goblin-kv/goblin/internal/shm"
)

func newTestRing(t testing.TB, capacity int) ringBuffer {
	t.Helper()
	r, err := newRingBuffer(make([]byte, capacity+rbTrailerLength))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRingBufferRejectsBadCapacity(t *testing.T) {
	if _, err := newRingBuffer(make([]byte, 1000+rbTrailerLength)); err == nil {
		t.Fatal("accepted a capacity that is not a power of two")
	}
}

func TestRingBufferWriteRead(t *testing.T) {
	r := newTestRing(t, 1024)
	if err := r.write(7, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := r.write(0, []byte("x")); err == nil {
		t.Fatal("type 0 accepted")
	}
	var got []string
	n := r.read(func(typeID int32, msg []byte) {
		if typeID != 7 {
			t.Errorf("type %d", typeID)
		}
		got = append(got, string(msg))
	}, 10)
	if n != 1 || len(got) != 1 || got[0] != "hello" {
		t.Fatalf("read %d %q", n, got)
	}
	// Consumed bytes are zeroed (producers rely on it) and head advanced.
	if !bytes.Equal(r.buf[:16], make([]byte, 16)) {
		t.Fatal("consumed record not zeroed")
	}
	if h := shm.GetInt64(r.buf, r.trailer+rbHeadOffset); h != 16 {
		t.Fatalf("head %d, want 16", h)
	}
	if id := r.nextCorrelationID(); id != 0 || r.nextCorrelationID() != 1 {
		t.Fatal("correlation ids do not count up")
	}
}

func TestRingBufferFull(t *testing.T) {
	r := newTestRing(t, 1024) // max message 128
	msg := make([]byte, 120)  // record 128
	for i := 0; i < 8; i++ {
		if err := r.write(1, msg); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.write(1, msg); !errors.Is(err, ErrRingFull) {
		t.Fatalf("write to a full ring: %v", err)
	}
	if err := r.write(1, make([]byte, 129)); err == nil || errors.Is(err, ErrRingFull) {
		t.Fatalf("oversized message: %v", err)
	}
	if n := r.read(func(int32, []byte) {}, 1); n != 1 {
		t.Fatalf("read %d", n)
	}
	if err := r.write(1, msg); err != nil {
		t.Fatalf("room after a read: %v", err)
	}
}

func TestRingBufferWrapWithPadding(t *testing.T) {
	r := newTestRing(t, 1024)
	small := make([]byte, 100) // record 108 → 112
	for i := 0; i < 9; i++ {   // tail 1008
		if err := r.write(1, small); err != nil {
			t.Fatal(err)
		}
	}
	r.read(func(int32, []byte) {}, 1) // head 112
	// A 128-byte record does not fit in the 16 bytes to the end, and the
	// start of the buffer has only 112 free bytes: no room.
	if err := r.write(2, make([]byte, 120)); !errors.Is(err, ErrRingFull) {
		t.Fatalf("wrap without room at the start: %v", err)
	}
	// A 112-byte record fits at the start: padding fills 1008..1023.
	payload := bytes.Repeat([]byte{0xAB}, 100)
	if err := r.write(3, payload); err != nil {
		t.Fatal(err)
	}
	if l, ty := shm.GetInt32(r.buf, 1008), shm.GetInt32(r.buf, 1012); l != 16 || ty != rbPaddingTypeID {
		t.Fatalf("padding record len=%d type=%d", l, ty)
	}
	if tail := shm.GetInt64(r.buf, r.trailer+rbTailOffset); tail != 1024+112 {
		t.Fatalf("tail %d", tail)
	}
	var types []int32
	var last []byte
	for i := 0; i < 3; i++ {
		r.read(func(ty int32, m []byte) { types = append(types, ty); last = append(last[:0], m...) }, 100)
	}
	if len(types) != 9 || types[8] != 3 || !bytes.Equal(last, payload) {
		t.Fatalf("types %v", types)
	}
	if h := shm.GetInt64(r.buf, r.trailer+rbHeadOffset); h != 1136 {
		t.Fatalf("head %d after draining the wrapped ring", h)
	}
	if !bytes.Equal(r.buf[:1024], make([]byte, 1024)) {
		t.Fatal("drained ring not zeroed")
	}
}

func TestRingBufferConcurrentProducers(t *testing.T) {
	r := newTestRing(t, 4096)
	const producers, each = 4, 2000
	var wg sync.WaitGroup
	for p := 0; p < producers; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			msg := make([]byte, 8+p*13) // different sizes per producer
			for i := 0; i < each; {
				binary.LittleEndian.PutUint32(msg[0:], uint32(p))
				binary.LittleEndian.PutUint32(msg[4:], uint32(i))
				if err := r.write(int32(p+1), msg); err == nil {
					i++
				} else if errors.Is(err, ErrRingFull) {
					runtime.Gosched()
				} else {
					t.Error(err)
					return
				}
			}
		}(p)
	}
	next := make([]uint32, producers)
	total := 0
	for total < producers*each {
		total += r.read(func(ty int32, m []byte) {
			p := binary.LittleEndian.Uint32(m[0:])
			i := binary.LittleEndian.Uint32(m[4:])
			if int32(p+1) != ty || len(m) != 8+int(p)*13 {
				t.Fatalf("record type %d len %d from producer %d", ty, len(m), p)
			}
			if i != next[p] {
				t.Fatalf("producer %d: got message %d, want %d", p, i, next[p])
			}
			next[p]++
		}, 50)
	}
	wg.Wait()
}
