package broadcast

import (
	"bytes"
	"errors"
	"testing"
)

func newTestBroadcast(t testing.TB, capacity int) (*Transmitter, []byte) {
	t.Helper()
	buf := make([]byte, capacity+TrailerLength)
	tx, err := NewTransmitter(buf)
	if err != nil {
		t.Fatal(err)
	}
	return tx, buf
}

func TestBroadcastReceiveInOrderAcrossWrap(t *testing.T) {
	tx, buf := newTestBroadcast(t, 1024)
	rx, err := NewReceiver(buf)
	if err != nil {
		t.Fatal(err)
	}
	sent, got := 0, 0
	for round := 0; round < 200; round++ {
		// Send a few records of varying sizes, then drain: the tail wraps
		// (with padding records) many times.
		for k := 0; k < 3; k++ {
			size := (sent*29)%150 + 1
			tx.Transmit(int32(sent%100+1), bytes.Repeat([]byte{byte(sent)}, size))
			sent++
		}
		for {
			n, err := rx.Receive(func(ty int32, msg []byte) {
				size := (got*29)%150 + 1
				if ty != int32(got%100+1) || !bytes.Equal(msg, bytes.Repeat([]byte{byte(got)}, size)) {
					t.Fatalf("record %d: type %d len %d", got, ty, len(msg))
				}
				got++
			})
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
		}
	}
	if got != sent {
		t.Fatalf("got %d of %d", got, sent)
	}
}

func TestBroadcastNewReceiverStartsAtLatest(t *testing.T) {
	tx, buf := newTestBroadcast(t, 1024)
	tx.Transmit(1, []byte("old"))
	tx.Transmit(2, []byte("latest"))
	rx, _ := NewReceiver(buf)
	got := drain(t, rx)
	if len(got) != 1 || got[0] != "latest" {
		t.Fatalf("new receiver got %q, want only the latest record", got)
	}
}

// drain receives until rx has nothing more and returns the records' bodies.
func drain(t *testing.T, rx *Receiver) []string {
	t.Helper()
	var got []string
	for {
		n, err := rx.Receive(func(_ int32, m []byte) { got = append(got, string(m)) })
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return got
		}
	}
}

func TestBroadcastLapping(t *testing.T) {
	tx, buf := newTestBroadcast(t, 1024)
	rx, _ := NewReceiver(buf)
	tx.Transmit(1, []byte("first"))
	// Lap the receiver: write more than a capacity before it reads.
	for i := 0; i < 40; i++ {
		tx.Transmit(2, make([]byte, 40))
	}
	tx.Transmit(3, []byte("after"))
	_, err := rx.Receive(func(int32, []byte) { t.Fatal("delivered a lapped record") })
	if !errors.Is(err, ErrLapped) {
		t.Fatalf("lapped receiver: err %v", err)
	}
	if rx.lapped != 1 {
		t.Fatalf("lapped count %d", rx.lapped)
	}
	// It resynchronised to the latest record and keeps going.
	got := drain(t, rx)
	if len(got) != 1 || got[0] != "after" {
		t.Fatalf("after resync got %q", got)
	}
	tx.Transmit(4, []byte("next"))
	n, err := rx.Receive(func(ty int32, m []byte) {
		if ty != 4 || string(m) != "next" {
			t.Fatalf("got %d %q", ty, m)
		}
	})
	if n != 1 || err != nil {
		t.Fatalf("n=%d err=%v", n, err)
	}
}

func TestBroadcastOverrunDuringCopyIsDetected(t *testing.T) {
	tx, buf := newTestBroadcast(t, 1024)
	rx, _ := NewReceiver(buf)
	tx.Transmit(1, []byte("victim"))
	calls := 0
	_, err := rx.Receive(func(int32, []byte) { calls++ })
	if err != nil || calls != 1 {
		t.Fatalf("plain receive: %v %d", err, calls)
	}
	tx.Transmit(1, []byte("again"))
	// The transmitter announced (tail intent) that it is overwriting this
	// record: the receiver must refuse it rather than deliver torn bytes.
	intent := int64(len(buf) - TrailerLength)
	cur := rx.nextRecord
	putIntent(buf, cur+intent+8)
	_, err = rx.Receive(func(int32, []byte) { t.Fatal("delivered an overwritten record") })
	if !errors.Is(err, ErrLapped) {
		t.Fatalf("err %v", err)
	}
}

func putIntent(buf []byte, v int64) {
	capacity := len(buf) - TrailerLength
	for i := 0; i < 8; i++ {
		buf[capacity+TailIntentCounterOffset+i] = byte(v >> (8 * i))
	}
}
