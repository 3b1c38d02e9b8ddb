package ringbuffer

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"sync"
	"testing"

	"github.com/goblin-kv/goblin/internal/shm"
)

func newTestRing(t testing.TB, capacity int) *RingBuffer {
	t.Helper()
	r, err := New(make([]byte, capacity+TrailerLength))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRingBufferRejectsBadCapacity(t *testing.T) {
	if _, err := New(make([]byte, 1000+TrailerLength)); err == nil {
		t.Fatal("accepted a capacity that is not a power of two")
	}
}

func TestRingBufferWriteRead(t *testing.T) {
	r := newTestRing(t, 1024)
	if err := r.Write(7, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := r.Write(0, []byte("x")); err == nil {
		t.Fatal("type 0 accepted")
	}
	var got []string
	n := r.Read(func(typeID int32, msg []byte) {
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
	if h := shm.GetInt64(r.buf, r.trailer+HeadPositionOffset); h != 16 {
		t.Fatalf("head %d, want 16", h)
	}
	if id := r.NextCorrelationID(); id != 0 || r.NextCorrelationID() != 1 {
		t.Fatal("correlation ids do not count up")
	}
}

func TestRingBufferFull(t *testing.T) {
	r := newTestRing(t, 1024) // max message 128
	msg := make([]byte, 120)  // record 128
	for i := 0; i < 8; i++ {
		if err := r.Write(1, msg); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Write(1, msg); !errors.Is(err, ErrFull) {
		t.Fatalf("write to a full ring: %v", err)
	}
	if err := r.Write(1, make([]byte, 129)); err == nil || errors.Is(err, ErrFull) {
		t.Fatalf("oversized message: %v", err)
	}
	if n := r.Read(func(int32, []byte) {}, 1); n != 1 {
		t.Fatalf("read %d", n)
	}
	if err := r.Write(1, msg); err != nil {
		t.Fatalf("room after a read: %v", err)
	}
}

func TestRingBufferWrapWithPadding(t *testing.T) {
	r := newTestRing(t, 1024)
	small := make([]byte, 100) // record 108 → 112
	for i := 0; i < 9; i++ {   // tail 1008
		if err := r.Write(1, small); err != nil {
			t.Fatal(err)
		}
	}
	r.Read(func(int32, []byte) {}, 1) // head 112
	// A 128-byte record does not fit in the 16 bytes to the end, and the
	// start of the buffer has only 112 free bytes: no room.
	if err := r.Write(2, make([]byte, 120)); !errors.Is(err, ErrFull) {
		t.Fatalf("wrap without room at the start: %v", err)
	}
	// A 112-byte record fits at the start: padding fills 1008..1023.
	payload := bytes.Repeat([]byte{0xAB}, 100)
	if err := r.Write(3, payload); err != nil {
		t.Fatal(err)
	}
	if l, ty := shm.GetInt32(r.buf, 1008), shm.GetInt32(r.buf, 1012); l != 16 || ty != PaddingTypeID {
		t.Fatalf("padding record len=%d type=%d", l, ty)
	}
	if tail := shm.GetInt64(r.buf, r.trailer+TailPositionOffset); tail != 1024+112 {
		t.Fatalf("tail %d", tail)
	}
	var types []int32
	var last []byte
	for i := 0; i < 3; i++ {
		r.Read(func(ty int32, m []byte) { types = append(types, ty); last = append(last[:0], m...) }, 100)
	}
	if len(types) != 9 || types[8] != 3 || !bytes.Equal(last, payload) {
		t.Fatalf("types %v", types)
	}
	if h := shm.GetInt64(r.buf, r.trailer+HeadPositionOffset); h != 1136 {
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
				if err := r.Write(int32(p+1), msg); err == nil {
					i++
				} else if errors.Is(err, ErrFull) {
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
		total += r.Read(func(ty int32, m []byte) {
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

func TestRingBufferUnblock(t *testing.T) {
	t.Run("claimed with a negative length", func(t *testing.T) {
		r := newTestRing(t, 1024)
		// A producer claimed 32 bytes and stored -32, then died.
		i := r.claim(32)
		shm.StoreInt32Release(r.buf, i, -32)
		if err := r.Write(5, []byte("after")); err != nil {
			t.Fatal(err)
		}
		if n := r.Read(func(int32, []byte) {}, 10); n != 0 {
			t.Fatalf("read past a stuck record: %d", n)
		}
		if !r.Unblock() {
			t.Fatal("Unblock found nothing to do")
		}
		var got []string
		r.Read(func(_ int32, m []byte) { got = append(got, string(m)) }, 10)
		if len(got) != 1 || got[0] != "after" {
			t.Fatalf("after unblock read %q", got)
		}
	})
	t.Run("claimed and never marked", func(t *testing.T) {
		r := newTestRing(t, 1024)
		r.claim(40) // aligned to 40: the next record starts at 40
		if err := r.Write(5, []byte("next")); err != nil {
			t.Fatal(err)
		}
		if !r.Unblock() {
			t.Fatal("Unblock found nothing to do")
		}
		var got []string
		r.Read(func(_ int32, m []byte) { got = append(got, string(m)) }, 10)
		if len(got) != 1 || got[0] != "next" {
			t.Fatalf("after unblock read %q", got)
		}
		if r.Unblock() {
			t.Fatal("Unblock on an empty ring did something")
		}
	})
	t.Run("in progress but nothing after it", func(t *testing.T) {
		r := newTestRing(t, 1024)
		r.claim(40)
		if r.Unblock() {
			t.Fatal("unblocked a claim with no later record to pad up to")
		}
	})
}

// TestRingBufferSkipsCorruptRecords: a client of the same user can write
// anything into the ring; a record length no producer writes (shorter
// than a header, past the end of the ring, 2 GiB) or a head moved off the
// record alignment must not panic the consumer. The bad record and what
// follows it up to the tail are skipped and counted, the head never
// passes the tail, and the ring works afterwards.
func TestRingBufferSkipsCorruptRecords(t *testing.T) {
	for _, tc := range []struct {
		name   string
		length int32
		head   int64 // added to the head before reading
	}{
		{"length 1", 1, 0},
		{"length 7", 7, 0},
		{"length past the ring", 1024 + 8, 0},
		{"length 2 GiB - 1", 1<<31 - 1, 0},
		{"head off the alignment", 0, 3},
		{"head at the last byte", 0, 1023},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestRing(t, 1024)
			if err := r.Write(7, []byte("first")); err != nil {
				t.Fatal(err)
			}
			if err := r.Write(7, []byte("second")); err != nil {
				t.Fatal(err)
			}
			if tc.length != 0 {
				shm.PutInt32(r.buf, 0, tc.length)
			}
			if tc.head != 0 {
				shm.PutInt64(r.buf, r.trailer+HeadPositionOffset, tc.head)
				shm.PutInt32(r.buf, int(tc.head)&1023, 1<<30)
			}
			r.Read(func(int32, []byte) {}, 10)
			if r.Corrupt() != 1 {
				t.Fatalf("Corrupt() = %d after a corrupt record, want 1", r.Corrupt())
			}
			head, tail := r.ConsumerPosition(), r.ProducerPosition()
			if head > tail && tc.head == 0 {
				t.Fatalf("head %d passed the tail %d", head, tail)
			}
			// Put the positions right, as a fresh consumer would find them
			// after the scribbler went away, and the ring works again.
			shm.PutInt64(r.buf, r.trailer+HeadPositionOffset, tail)
			clear(r.buf[:1024])
			if err := r.Write(7, []byte("after")); err != nil {
				t.Fatal(err)
			}
			var got []string
			r.Read(func(_ int32, msg []byte) { got = append(got, string(msg)) }, 10)
			if len(got) != 1 || got[0] != "after" {
				t.Fatalf("read %q after the corrupt record, want [after]", got)
			}
		})
	}
}
