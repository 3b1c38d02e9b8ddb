package aeronsource

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/rdb"
	"github.com/goblin-kv/goblin/replica"
	"github.com/goblin-kv/goblin/replication/aeronfeed"
)

// lines is an Applier whose commands are lines: it applies whole lines
// and records them.
type lines struct{ applied []byte }

func (l *lines) SetMasterLink(bool)         {}
func (l *lines) BeginFullSync()             {}
func (l *lines) Reserve(int, int)           {}
func (l *lines) LoadEntry(*rdb.Entry) error { return nil }
func (l *lines) EndFullSync(bool)           {}
func (l *lines) ResetMaster()               {}
func (l *lines) ApplyMaster(in []byte, max int) (consumed, applied, getack int) {
	for n := 0; n < max; n++ {
		i := bytes.IndexByte(in[consumed:], '\n')
		if i < 0 {
			break
		}
		consumed += i + 1
	}
	l.applied = append(l.applied, in[:consumed]...)
	return consumed, consumed, 0
}

// TestLiveNeverAppliesTwiceOrOutOfOrder feeds the live phase frames cut
// at random bytes, with duplicates, stale repeats and frames overtaking
// others: what is applied is always a prefix of the stream, every frame
// that starts past what was received is a gap that leaves the live phase
// (falls back to the link), and frames seen again are skipped.
func TestLiveNeverAppliesTwiceOrOutOfOrder(t *testing.T) {
	var stream []byte
	for i := range 20000 {
		stream = fmt.Appendf(stream, "%07d\n", i)
	}
	const id = "0123456789012345678901234567890123456789"
	var frames [][]byte
	for off := 0; off < len(stream); {
		n := min(1+rand.IntN(300), len(stream)-off)
		f := aeronfeed.AppendHeader(nil, aeronfeed.KindData, id, int64(off))
		frames = append(frames, append(f, stream[off:off+n]...))
		off += n
	}
	app := &lines{}
	link, err := replica.New(replica.Options{Apply: app, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s := &Source{o: Options{Apply: app, StreamSlice: 1 << 20}, log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		link: link, following: true, host: "127.0.0.1", port: 1, live: true, ids: replica.IDs{ID: id}}
	rng := rand.New(rand.NewPCG(5, 6))
	gaps, dups := 0, 0
	for i := 0; i < len(frames); {
		j := i
		switch r := rng.IntN(20); {
		case r == 0 && i+1 < len(frames): // overtaken: the next frame first
			j = i + 1
		case r == 1 && i > 0: // a duplicate of an older frame
			j = rng.IntN(i)
		}
		if !s.live {
			// The link caught up at the offset applied: live again.
			s.live = true
			s.stream, s.head, s.consumed, s.stalled = s.stream[:0], 0, 0, false
		}
		var f aeronfeed.Frame
		if err := aeronfeed.Parse(frames[j], &f); err != nil {
			t.Fatal(err)
		}
		recv := s.ids.Offset + int64(len(s.stream)-s.head)
		ok := s.onLive(&f)
		switch {
		case f.Offset > recv:
			if ok || s.live {
				t.Fatalf("frame at %d past %d received: not a gap", f.Offset, recv)
			}
			gaps++
		case f.End() <= recv:
			dups++
		}
		s.apply(1 << 20)
		if !bytes.Equal(app.applied, stream[:len(app.applied)]) || int64(len(app.applied)) != s.ids.Offset {
			t.Fatalf("applied %d bytes: not a prefix of the stream, or the offset %d is not theirs", len(app.applied), s.ids.Offset)
		}
		// The next frame to deliver: the first holding a byte not received.
		recv = s.ids.Offset + int64(len(s.stream)-s.head)
		i = sort.Search(len(frames), func(k int) bool {
			var g aeronfeed.Frame
			aeronfeed.Parse(frames[k], &g)
			return g.End() > recv
		})
	}
	if !bytes.Equal(app.applied, stream) {
		t.Fatalf("applied %d of %d bytes", len(app.applied), len(stream))
	}
	if gaps == 0 || dups == 0 || s.st.Gaps != int64(gaps) || s.st.Fallbacks != int64(gaps) {
		t.Fatalf("gaps %d (counted %d, fallbacks %d), duplicates %d: the test did not exercise both", gaps, s.st.Gaps, s.st.Fallbacks, dups)
	}
	t.Logf("%d frames, %d gaps (fallbacks), %d duplicates skipped", len(frames), gaps, dups)
}

// TestWithHost: a failover points control= (MDC) and the status
// endpoint= at the new primary, ports kept; other parameters and
// channels without the key are left alone.
func TestWithHost(t *testing.T) {
	for _, c := range []struct{ in, key, host, want string }{
		{"aeron:udp?endpoint=10.0.0.2:40456|control=10.0.0.1:40457|control-mode=dynamic", "control", "10.0.0.3",
			"aeron:udp?endpoint=10.0.0.2:40456|control=10.0.0.3:40457|control-mode=dynamic"},
		{"aeron:udp?endpoint=10.0.0.1:40458", "endpoint", "10.0.0.3", "aeron:udp?endpoint=10.0.0.3:40458"},
		{"aeron:udp?endpoint=239.1.2.3:40456|interface=10.0.0.2", "control", "10.0.0.3", "aeron:udp?endpoint=239.1.2.3:40456|interface=10.0.0.2"},
		{"aeron:udp?endpoint=10.0.0.1:40458", "endpoint", "fe80::1", "aeron:udp?endpoint=[fe80::1]:40458"},
		{"", "endpoint", "10.0.0.3", ""},
	} {
		if got := withHost(c.in, c.key, c.host); got != c.want {
			t.Errorf("withHost(%q, %s, %s) = %q, want %q", c.in, c.key, c.host, got, c.want)
		}
	}
}

// TestForeignPrimaryIgnored: two primaries publish on one multicast group
// (after a double failover, until Sentinel demotes the stale one). A live
// replica applies its own primary's stream and ignores the other's frames
// without falling back; once its own primary has been quiet for longer
// than ForeignGrace, the other's next frame is taken for a successor and
// sends it back to the link at once. While catching up over a connected
// link, only the link's history is buffered.
func TestForeignPrimaryIgnored(t *testing.T) {
	const ours, theirs = "0123456789012345678901234567890123456789", "abcdefghijabcdefghijabcdefghijabcdefghij"
	frame := func(id string, off int, payload string) *aeronfeed.Frame {
		var f aeronfeed.Frame
		if err := aeronfeed.Parse(append(aeronfeed.AppendHeader(nil, aeronfeed.KindData, id, int64(off)), payload...), &f); err != nil {
			t.Fatal(err)
		}
		return &f
	}
	app := &lines{}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	link, err := replica.New(replica.Options{Apply: app, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	s := &Source{o: Options{Apply: app, StreamSlice: 1 << 20, MaxBuffer: 1 << 20}, log: quiet,
		link: link, following: true, host: "127.0.0.1", port: 1, live: true, ids: replica.IDs{ID: ours}}
	var want []byte
	now := int64(0)
	for i := range 50 {
		now += int64(10 * time.Millisecond)
		line := fmt.Sprintf("%07d\n", i)
		if !s.onFrame(frame(ours, len(want), line), now) {
			t.Fatalf("frame %d of the followed primary: fell back", i)
		}
		want = append(want, line...)
		if !s.onFrame(frame(theirs, 8*i, fmt.Sprintf("other%02d\n", i)), now) {
			t.Fatalf("frame %d of the other primary: fell back (%d fallbacks)", i, s.st.Fallbacks)
		}
		s.apply(1 << 20)
	}
	if !bytes.Equal(app.applied, want) || s.st.Foreign != 50 || s.st.Fallbacks != 0 || !s.live {
		t.Fatalf("applied %q (want the followed primary's %d bytes), foreign %d (want 50), fallbacks %d, live %v",
			app.applied, len(want), s.st.Foreign, s.st.Fallbacks, s.live)
	}
	// The followed primary goes quiet: a new id is its successor.
	now += int64(ForeignGrace + time.Millisecond)
	if s.onFrame(frame(theirs, 0, "x\n"), now) || s.live || s.st.Fallbacks != 1 {
		t.Fatalf("a new id after %v of silence: live %v, fallbacks %d; want a fallback to the link", ForeignGrace, s.live, s.st.Fallbacks)
	}

	// Catching up over a link connected to our primary's history.
	link.Resume("127.0.0.1", 1, replica.IDs{ID: ours})
	link.Handoff()
	link.Carried(0, 0)
	s.resetBuf()
	s.onFrame(frame(ours, 0, "a\n"), now)
	s.onFrame(frame(theirs, 0, "zzzz\n"), now)
	s.onFrame(frame(ours, 2, "b\n"), now)
	if string(s.buf) != "a\nb\n" || string(s.bufID[:]) != ours || s.st.Foreign != 51 {
		t.Fatalf("catching up: buffered %q of id %q, foreign %d; want \"a\\nb\\n\" of the link's id, foreign 51", s.buf, s.bufID[:], s.st.Foreign)
	}
}
