package sbe

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/goblin-kv/goblin/command"
)

// feedFrames splits the frames of in as a connection would receive it, in
// pieces of the given sizes (the last repeats; none means whole), moving the
// unconsumed bytes to a new buffer after every piece. It describes the
// frames and the final error or rest.
func feedFrames(t testing.TB, f *FrameReader, in []byte, maxFrame int, pieces ...int) string {
	var out bytes.Buffer
	var pending []byte
	for off, k := 0, 0; off < len(in); k++ {
		size := len(in) - off
		if len(pieces) > 0 {
			size = min(pieces[min(k, len(pieces)-1)], len(in)-off)
		}
		pending = append(bytes.Clone(pending), in[off:off+size]...)
		off += size
		for {
			msg, n, err := f.ReadFrame(pending, maxFrame)
			if err != nil {
				fmt.Fprintf(&out, "err %v", err)
				return out.String()
			}
			if n == 0 {
				break
			}
			if n > len(pending) || len(msg) != n-SOFHLen {
				t.Fatalf("frame of %d bytes, n %d of %d", len(msg), n, len(pending))
			}
			fmt.Fprintf(&out, "%x | ", msg)
			pending = pending[n:]
		}
	}
	fmt.Fprintf(&out, "rest %d", len(pending))
	return out.String()
}

// readAll is feedFrames's whole-input answer from the stateless ReadFrame.
func readAll(in []byte, maxFrame int) string {
	var out bytes.Buffer
	for {
		msg, n, err := ReadFrame(in, maxFrame)
		if err != nil {
			fmt.Fprintf(&out, "err %v", err)
			return out.String()
		}
		if n == 0 {
			fmt.Fprintf(&out, "rest %d", len(in))
			return out.String()
		}
		fmt.Fprintf(&out, "%x | ", msg)
		in = in[n:]
	}
}

// TestFrameReaderWorkPerByteIsConstant: a 7 MB frame trickled in byte by
// byte costs the reader what it costs arriving whole (its header, once),
// where a reader that forgot the header between calls would examine it on
// every call.
func TestFrameReaderWorkPerByteIsConstant(t *testing.T) {
	var c Codec
	frame := AppendFramed(nil, &c, &command.Request{Op: command.OpSet, Key: []byte("k"), Value: bytes.Repeat([]byte("v"), 7<<20)})
	var f FrameReader
	if _, n, _ := f.ReadFrame(frame, 0); n != len(frame) {
		t.Fatalf("whole: n %d", n)
	}
	whole := f.Examined()
	for end := 1; end <= len(frame); end++ {
		_, n, err := f.ReadFrame(frame[:end], 0)
		if err != nil || (n != 0) != (end == len(frame)) {
			t.Fatalf("prefix %d: n %d err %v", end, n, err)
		}
	}
	trickled := f.Examined() - whole
	t.Logf("a %d-byte frame: %d header bytes examined whole, %d byte by byte", len(frame), whole, trickled)
	if trickled > 2*whole {
		t.Fatalf("byte by byte the reader examined %d bytes, more than twice the %d of the whole frame", trickled, whole)
	}
}

func TestFrameReaderAllocs(t *testing.T) {
	var c Codec
	frame := AppendFramed(nil, &c, &command.Request{Op: command.OpGet, Key: []byte("key")})
	var f FrameReader
	if a := testing.AllocsPerRun(1000, func() {
		f.ReadFrame(frame[:3], 0)
		f.ReadFrame(frame[:10], 0)
		f.ReadFrame(frame, 0)
	}); a != 0 {
		t.Fatalf("FrameReader.ReadFrame allocates %.1f times per run", a)
	}
}

// FuzzFrameReader: a FrameReader fed the input whole, split in two at every
// point and byte by byte finds the same frames and error as the stateless
// ReadFrame given it whole.
func FuzzFrameReader(f *testing.F) {
	var c Codec
	two := AppendFramed(nil, &c, &command.Request{CorrelationID: 1, Op: command.OpSet, Key: []byte("k"), Value: []byte("v")})
	two = AppendFramed(two, &c, &command.Request{CorrelationID: 2, Op: command.OpPing, Compact: true})
	f.Add(two)
	f.Add(two[:len(two)-3])
	f.Add([]byte{0, 0, 0, 6, 0xEB, 0x50})
	f.Add([]byte{0, 0, 0, 5, 0xEB, 0x50})
	f.Add([]byte{0, 0, 0, 9, 0x5B, 0xE0, 1, 2, 3})
	f.Add([]byte{0, 1, 0, 0, 0xEB, 0x50, 0})
	const maxFrame = 1 << 12
	f.Fuzz(func(t *testing.T, in []byte) {
		want := readAll(in, maxFrame)
		var r FrameReader
		if got := feedFrames(t, &r, in, maxFrame); got != want {
			t.Fatalf("whole: %q, stateless %q", got, want)
		}
		for at := 1; at < len(in); at++ {
			r.Reset()
			if got := feedFrames(t, &r, in, maxFrame, at, len(in)); got != want {
				t.Fatalf("split at %d: %q, stateless whole %q", at, got, want)
			}
		}
		r.Reset()
		if got := feedFrames(t, &r, in, maxFrame, 1); got != want {
			t.Fatalf("byte by byte: %q, stateless whole %q", got, want)
		}
	})
}

// TestFrameReaderWhole: Whole answers only what ReadFrame answers with a
// whole frame, the same frame and length, and leaves every other case
// (partial frame or header, bad header, frame over maxFrame, no maxFrame, a
// partial frame pending) to ReadFrame.
func TestFrameReaderWhole(t *testing.T) {
	frame := func(size int, enc uint16, total int) []byte {
		b := make([]byte, total)
		binary.BigEndian.PutUint32(b, uint32(size))
		if total >= SOFHLen {
			binary.BigEndian.PutUint16(b[4:], enc)
		}
		return b
	}
	cases := []struct {
		name     string
		buf      []byte
		maxFrame int
		whole    bool
	}{
		{"whole", frame(20, EncodingTypeSBE10LE, 20), 64, true},
		{"whole then more", frame(20, EncodingTypeSBE10LE, 30), 64, true},
		{"just the header", frame(SOFHLen, EncodingTypeSBE10LE, SOFHLen), 64, true},
		{"at maxFrame", frame(64, EncodingTypeSBE10LE, 64), 64, true},
		{"over maxFrame", frame(65, EncodingTypeSBE10LE, 65), 64, false},
		{"no maxFrame", frame(20, EncodingTypeSBE10LE, 20), 0, false},
		{"partial frame", frame(20, EncodingTypeSBE10LE, 19), 64, false},
		{"partial header", frame(20, EncodingTypeSBE10LE, 5)[:5], 64, false},
		{"short size", frame(SOFHLen-1, EncodingTypeSBE10LE, 20), 64, false},
		{"bad encoding", frame(20, 0x1234, 20), 64, false},
	}
	for _, c := range cases {
		var w, r FrameReader
		msg, n := w.Whole(c.buf, c.maxFrame)
		if (n > 0) != c.whole {
			t.Fatalf("%s: Whole n = %d, want a frame: %v", c.name, n, c.whole)
		}
		if n == 0 {
			if w != (FrameReader{}) {
				t.Fatalf("%s: Whole declined but changed the reader", c.name)
			}
			continue
		}
		want, wn, err := r.ReadFrame(c.buf, c.maxFrame)
		if err != nil || wn != n || len(want) != len(msg) || cap(want) != cap(msg) || (len(msg) > 0 && &want[0] != &msg[0]) || w != r {
			t.Fatalf("%s: Whole = %d bytes, %d; ReadFrame = %d bytes, %d, %v", c.name, len(msg), n, len(want), wn, err)
		}
	}
	// A partial frame pending: Whole leaves it to ReadFrame even once the
	// rest has arrived.
	var f FrameReader
	buf := frame(20, EncodingTypeSBE10LE, 20)
	if _, n, err := f.ReadFrame(buf[:10], 64); n != 0 || err != nil {
		t.Fatalf("partial: %d %v", n, err)
	}
	if _, n := f.Whole(buf, 64); n != 0 {
		t.Fatalf("Whole answered with a partial frame pending")
	}
	if _, n, err := f.ReadFrame(buf, 64); n != 20 || err != nil {
		t.Fatalf("rest: %d %v", n, err)
	}
}
