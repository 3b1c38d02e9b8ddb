package sbe

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/goblin-kv/goblin/request"
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
	frame := AppendFramed(nil, &c, &request.Request{Op: request.OpSet, Key: []byte("k"), Value: bytes.Repeat([]byte("v"), 7<<20)})
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
	frame := AppendFramed(nil, &c, &request.Request{Op: request.OpGet, Key: []byte("key")})
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
	two := AppendFramed(nil, &c, &request.Request{CorrelationID: 1, Op: request.OpSet, Key: []byte("k"), Value: []byte("v")})
	two = AppendFramed(two, &c, &request.Request{CorrelationID: 2, Op: request.OpPing, Compact: true})
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
