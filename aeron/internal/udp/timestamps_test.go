package udp

import (
	"net/netip"
	"testing"
	"time"
)

// TestReceiveTimestamps: datagrams read from a socket opened with
// ReceiveTimestamps carry the kernel's receive time, between the wall
// clock before the send and after the read, also when the socket had been
// found empty (no recvfrom shortcut); a socket without it reports none,
// and reading the timestamps allocates nothing.
func TestReceiveTimestamps(t *testing.T) {
	rx, err := Open(Options{Bind: netip.MustParseAddrPort("127.0.0.1:0"), ReceiveTimestamps: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	if !rx.Timestamps() {
		t.Fatal("Timestamps() false on a ReceiveTimestamps socket")
	}
	plain := openLoopback(t)
	tx := openLoopback(t)
	b := NewRecvBatch(4, 2048)
	if n, err := b.Recv(rx); n != 0 || err != nil { // leaves rx marked empty
		t.Fatalf("Recv of an empty socket: %d %v", n, err)
	}
	for round := range 2 {
		before := time.Now().UnixNano()
		for range 3 {
			if _, err := tx.SendTo([]byte("stamp me"), rx.LocalAddr()); err != nil {
				t.Fatal(err)
			}
		}
		waitReadable(t, rx)
		time.Sleep(10 * time.Millisecond)
		recvWithin(t, b, rx, 3)
		after := time.Now().UnixNano()
		for i := range 3 {
			ts, ok := b.Timestamp(i)
			if !ok || ts < before || ts > after {
				t.Fatalf("round %d datagram %d: timestamp %d (%t), want within [%d, %d]", round, i, ts, ok, before, after)
			}
		}
		if allocs := testing.AllocsPerRun(100, func() { b.Timestamp(0) }); allocs != 0 {
			t.Fatalf("Timestamp allocates %v", allocs)
		}
	}
	if _, err := tx.SendTo([]byte("plain"), plain.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	waitReadable(t, plain)
	recvWithin(t, b, plain, 1)
	if ts, ok := b.Timestamp(0); ok {
		t.Fatalf("a socket without ReceiveTimestamps gave timestamp %d", ts)
	}
}
