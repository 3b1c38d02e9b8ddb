package replication

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestBacklogMatchesPlainHistory feeds random chunks and checks every
// offset the backlog claims to hold against the whole history kept in a
// plain slice, across wrap-arounds and a resize.
func TestBacklogMatchesPlainHistory(t *testing.T) {
	s := NewState(MinBacklogSize)
	s.CreateBacklog(true)
	var all []byte
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		if i == 1000 {
			s.SetBacklogSize(MinBacklogSize * 2)
		}
		n := rng.IntN(200)
		if i%300 == 299 {
			n = MinBacklogSize + 5 // larger than the ring
		}
		p := make([]byte, n)
		for j := range p {
			p[j] = byte(rng.Uint32())
		}
		all = append(all, p...)
		s.Feed(p)
		if s.Offset != int64(len(all)) {
			t.Fatalf("offset %d, fed %d", s.Offset, len(all))
		}
		b := s.Backlog()
		if b.First()+int64(b.Len()) != s.Offset+1 {
			t.Fatalf("first %d + len %d != offset %d + 1", b.First(), b.Len(), s.Offset)
		}
		for _, off := range []int64{b.First(), b.First() + int64(rng.IntN(b.Len()+1)), s.Offset + 1} {
			got, ok := b.From(nil, off)
			if !ok || !bytes.Equal(got, all[off-1:]) {
				t.Fatalf("step %d: From(%d) = %d bytes, ok %v; want %d bytes", i, off, len(got), ok, len(all[off-1:]))
			}
			if !s.Continue(s.ID, off) {
				t.Fatalf("Continue(%d) refused inside [%d, %d]", off, b.First(), s.Offset+1)
			}
		}
		if s.Continue(s.ID, b.First()-1) && b.First() > 1 {
			t.Fatalf("Continue before the backlog's first byte accepted")
		}
	}
}

// TestContinueAfterShift: a former sibling continues with the old id up to
// the offset of the promotion, not beyond, and an unknown id never.
func TestContinueAfterShift(t *testing.T) {
	s := NewState(0)
	s.CreateBacklog(true)
	s.Feed([]byte("*1\r\n$4\r\nping\r\n"))
	old := s.ID
	s.Shift()
	if s.ID == old || s.ID2 != old || s.SecondOffset != 15 {
		t.Fatalf("after Shift: id %s id2 %s second %d", s.ID, s.ID2, s.SecondOffset)
	}
	s.Feed([]byte("x"))
	if !s.Continue(old, 15) || s.Continue(old, 16) || s.Continue(NewID(), 1) || !s.Continue(s.ID, 16) {
		t.Fatal("PSYNC rules across a shift broken")
	}
	info := string(s.AppendInfo(nil))
	for _, want := range []string{"master_replid2:" + old, "second_repl_offset:15", "master_repl_offset:15",
		"repl_backlog_active:1", "repl_backlog_size:1048576", "repl_backlog_first_byte_offset:1", "repl_backlog_histlen:15"} {
		if !strings.Contains(info, want+"\r\n") {
			t.Errorf("INFO lacks %q:\n%s", want, info)
		}
	}
}

func TestAppendCommand(t *testing.T) {
	got := string(AppendCommand(nil, []byte("SELECT"), []byte("3")))
	if got != "*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n" {
		t.Fatalf("got %q", got)
	}
}
