package errorlog

import (
	"testing"

	"github.com/goblin-kv/goblin/internal/shm"
)

func TestLogCountsDistinctErrors(t *testing.T) {
	buf := make([]byte, 1024)
	l := NewLog(buf)
	if HasErrors(buf) {
		t.Fatal("empty log has errors")
	}
	for _, o := range []struct {
		text string
		at   int64
	}{{"first error", 100}, {"second", 300}, {"first error", 150}, {"first error", 200}} {
		if !l.Record(o.text, o.at) {
			t.Fatalf("record %q", o.text)
		}
	}
	var got []Record
	if n := Read(buf, 0, func(r Record) { got = append(got, r) }); n != 2 {
		t.Fatalf("read %d records", n)
	}
	if got[0].Text != "first error" || got[0].ObservationCount != 3 || got[0].FirstObservation != 100 ||
		got[0].LastObservation != 200 || got[1].Text != "second" || got[1].ObservationCount != 1 {
		t.Fatalf("%+v", got)
	}
	if n := Read(buf, 250, func(Record) {}); n != 1 {
		t.Fatalf("since filter: %d", n)
	}
	// The second record starts at the 8-aligned end of the first.
	if off := shm.Align(EncodedErrorOffset+len("first error"), RecordAlignment); shm.GetInt32(buf, off) != EncodedErrorOffset+6 {
		t.Fatalf("second record not at %d", off)
	}
}

func TestLogFull(t *testing.T) {
	buf := make([]byte, 64)
	l := NewLog(buf)
	if !l.Record("fits in the log", 1) {
		t.Fatal("first record refused")
	}
	if l.Record("this one does not fit any more", 2) {
		t.Fatal("record past the end accepted")
	}
	if !l.Record("fits in the log", 3) {
		t.Fatal("a known error must still count when the log is full")
	}
	if n := Read(buf, 0, func(r Record) {
		if r.ObservationCount != 2 {
			t.Errorf("count %d", r.ObservationCount)
		}
	}); n != 1 {
		t.Fatalf("read %d", n)
	}
}
