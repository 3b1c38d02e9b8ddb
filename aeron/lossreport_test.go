package aeron

import (
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/shm"
)

// putLossEntry writes an entry at off in the driver's layout and returns
// the offset of the next one.
func putLossEntry(buf []byte, off int, e LossEntry) int {
	shm.PutInt64(buf, off+lrBytesLost, e.BytesLost)
	shm.PutInt64(buf, off+lrFirst, e.FirstObservation.UnixMilli())
	shm.PutInt64(buf, off+lrLast, e.LastObservation.UnixMilli())
	shm.PutInt32(buf, off+lrSessionID, e.SessionID)
	shm.PutInt32(buf, off+lrStreamID, e.StreamID)
	p := off + lrChannel
	for _, s := range []string{e.Channel, e.Source} {
		shm.PutInt32(buf, p, int32(len(s)))
		p += 4 + copy(buf[p+4:], s)
	}
	shm.PutInt64(buf, off+lrObservations, e.Observations) // last, as the driver does
	return off + align(p-off, lrEntryAlign)
}

func TestReadLossReport(t *testing.T) {
	t0 := time.UnixMilli(1_700_000_000_123)
	want := []LossEntry{
		{Observations: 3, BytesLost: 4096, FirstObservation: t0, LastObservation: t0.Add(time.Second),
			SessionID: -7, StreamID: 1001, Channel: "aeron:udp?endpoint=127.0.0.1:40123", Source: "127.0.0.1:51000"},
		{Observations: 1, BytesLost: 1408, FirstObservation: t0, LastObservation: t0,
			SessionID: 42, StreamID: 7, Channel: "aeron:udp?endpoint=10.0.0.1:1|mtu=8k" + strings.Repeat("x", 40), Source: ""},
	}
	buf := make([]byte, 4096)
	off := 0
	for _, e := range want {
		off = putLossEntry(buf, off, e)
	}
	if off != 256 {
		t.Fatalf("entries end at %d, want 256 (entries of 97 and 124 bytes, each rounded up to 128)", off)
	}
	var got []LossEntry
	n, err := readLossReport(buf, func(e LossEntry) { got = append(got, e) })
	if err != nil || n != len(want) {
		t.Fatalf("read %d entries, %v", n, err)
	}
	for i := range want {
		if g, w := got[i], want[i]; g.Observations != w.Observations || g.BytesLost != w.BytesLost ||
			!g.FirstObservation.Equal(w.FirstObservation) || !g.LastObservation.Equal(w.LastObservation) ||
			g.SessionID != w.SessionID || g.StreamID != w.StreamID || g.Channel != w.Channel || g.Source != w.Source {
			t.Fatalf("entry %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
	// An entry being written (count still 0) ends the report.
	if n, err := readLossReport(make([]byte, 256), func(LossEntry) { t.Fatal("entry in an empty report") }); n != 0 || err != nil {
		t.Fatalf("empty report: %d, %v", n, err)
	}
	// A channel length running past the file is an error, not a panic.
	bad := make([]byte, 128)
	putLossEntry(bad, 0, LossEntry{Observations: 1, Channel: "c"})
	shm.PutInt32(bad, lrChannel, 1000)
	if _, err := readLossReport(bad, func(LossEntry) {}); err == nil {
		t.Fatal("a channel past the end was accepted")
	}
	// So is a file too short for a whole entry: it reads as empty.
	if n, err := readLossReport(buf[:lrMinEntryBytes-1], func(LossEntry) {}); n != 0 || err != nil {
		t.Fatalf("short file: %d, %v", n, err)
	}
}
