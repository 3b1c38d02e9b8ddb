package wire

import (
	"testing"

	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
)

// frames lays out DATA/PAD frames from termOffset: each entry is a frame
// length (its aligned length is what it takes, up to 8 KiB; a frame
// claiming more, or less than nothing, is given 64 bytes) and a type.
func frames(termOffset int32, spec ...[2]int32) []byte {
	var b []byte
	off := termOffset
	for _, s := range spec {
		aligned := (s[0] + logbuffer.FrameAlignment - 1) &^ (logbuffer.FrameAlignment - 1)
		if s[1] == TypePad {
			aligned = DataHeaderLength // a closing pad sends its header only
		} else if aligned <= 0 || aligned > 8<<10 {
			aligned = 64
		}
		f := make([]byte, aligned)
		PutHeartbeat(f, 0xC0, 1, 2, 3, off)
		shm.PutInt32(f, FrameLengthOffset, s[0])
		shm.PutUint16(f, TypeOffset, uint16(s[1]))
		b = append(b, f...)
		off += (s[0] + logbuffer.FrameAlignment - 1) &^ (logbuffer.FrameAlignment - 1)
	}
	return b
}

func TestDataPacketLength(t *testing.T) {
	const term = 64 << 10
	heartbeat := make([]byte, DataHeaderLength)
	PutHeartbeat(heartbeat, 0, 1, 2, 3, 64)
	for _, c := range []struct {
		name       string
		b          []byte
		termOffset int32
		want       int
	}{
		{"heartbeat", heartbeat, 64, 0},
		{"one frame", frames(0, [2]int32{100, TypeData}), 0, 128},
		{"two frames", frames(64, [2]int32{64, TypeData}, [2]int32{33, TypeData}), 64, 128},
		{"frame ends at the term's end", frames(term-64, [2]int32{64, TypeData}), term - 64, 64},
		{"closing pad counts its padded length", frames(term-4096, [2]int32{4096, TypePad}), term - 4096, 4096},
		{"frames then a closing pad", frames(term-128, [2]int32{64, TypeData}, [2]int32{64, TypePad}), term - 128, 128},
		{"term offset past the term", frames(term, [2]int32{64, TypeData}), term, -1},
		{"negative term offset", frames(-64, [2]int32{64, TypeData}), -64, -1},
		{"unaligned term offset", frames(3, [2]int32{64, TypeData}), 3, -1},
		{"frame past the term's end", frames(term-32, [2]int32{64, TypeData}), term - 32, -1},
		{"frame past the datagram", frames(0, [2]int32{64, TypeData})[:32], 0, -1},
		{"data frame longer than the datagram", frames(0, [2]int32{1 << 30, TypeData})[:64], 0, -1},
		{"frame shorter than the datagram", append(frames(0, [2]int32{32, TypeData}), make([]byte, 32)...), 0, -1},
		{"negative frame length", frames(0, [2]int32{-64, TypeData})[:64], 0, -1},
		{"data frame shorter than its header", frames(0, [2]int32{1, TypeData}), 0, -1},
		{"pad frame shorter than its header", frames(0, [2]int32{31, TypePad}), 0, -1},
		{"short frame then a frame", frames(0, [2]int32{16, TypeData}, [2]int32{64, TypeData}), 0, -1},
		{"frame then a short frame", frames(0, [2]int32{64, TypeData}, [2]int32{31, TypeData}), 0, -1},
		{"second frame at the wrong offset", append(frames(0, [2]int32{32, TypeData}), frames(512, [2]int32{32, TypeData})...), 0, -1},
		{"frame of another type", frames(0, [2]int32{64, TypeSetup}), 0, -1},
		{"header's term offset is not the datagram's", frames(64, [2]int32{64, TypeData}), 128, -1},
	} {
		if got := DataPacketLength(c.b, c.termOffset, term); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
		if got := DataPacketLength(c.b, c.termOffset, term); got > 0 && int(c.termOffset)+len(c.b) > term {
			t.Errorf("%s: passed, yet %d bytes at %d do not fit the term", c.name, len(c.b), c.termOffset)
		}
	}
}

func TestValidSetup(t *testing.T) {
	ok := SetupFields{TermLength: 64 << 10, MTU: 1408, InitialTermID: 5, ActiveTermID: 7, TermOffset: 4096}
	for _, c := range []struct {
		name string
		edit func(*SetupFields)
		want bool
	}{
		{"valid", func(*SetupFields) {}, true},
		{"1 GiB term", func(f *SetupFields) { f.TermLength = 1 << 30 }, true},
		{"term ids wrapping forwards", func(f *SetupFields) { f.InitialTermID, f.ActiveTermID = 1<<31-1, -1<<31 }, true},
		{"term length 0", func(f *SetupFields) { f.TermLength, f.TermOffset = 0, 0 }, false},
		{"term length 1000", func(f *SetupFields) { f.TermLength, f.TermOffset = 1000, 0 }, false},
		{"negative term length", func(f *SetupFields) { f.TermLength = -1 << 31 }, false},
		{"2 GiB - 1 term", func(f *SetupFields) { f.TermLength = 1<<31 - 1 }, false},
		{"32 KiB term", func(f *SetupFields) { f.TermLength, f.TermOffset = 32<<10, 0 }, false},
		{"offset at the term's end", func(f *SetupFields) { f.TermOffset = 64 << 10 }, false},
		{"negative offset", func(f *SetupFields) { f.TermOffset = -32 }, false},
		{"unaligned offset", func(f *SetupFields) { f.TermOffset = 4100 }, false},
		{"MTU 0", func(f *SetupFields) { f.MTU = 0 }, false},
		{"MTU past a datagram", func(f *SetupFields) { f.MTU = 65536 }, false},
		{"unaligned MTU", func(f *SetupFields) { f.MTU = 1400 }, false},
		{"active term before the initial one", func(f *SetupFields) { f.ActiveTermID = 4 }, false},
	} {
		f := ok
		c.edit(&f)
		b := make([]byte, SetupLength)
		PutSetup(b, &f)
		if got := ValidSetup(Setup(b)); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestValidDataSocketFrame(t *testing.T) {
	setup := make([]byte, SetupLength)
	PutSetup(setup, &SetupFields{TermLength: 64 << 10, MTU: 1408})
	rttm := make([]byte, RTTMLength)
	PutRTTM(rttm, 0, 1, 2, 3, 4, 5)
	for _, c := range []struct {
		name string
		b    []byte
		want bool
	}{
		{"data", frames(0, [2]int32{64, TypeData}), true},
		{"setup", setup, true},
		{"rttm", rttm, true},
		{"short", setup[:7], false},
		{"data not a whole number of frames", frames(0, [2]int32{64, TypeData})[:40], false},
		{"setup cut short", setup[:SetupLength-4], false},
		{"setup frame length past the datagram", func() []byte {
			b := append([]byte(nil), setup...)
			shm.PutInt32(b, FrameLengthOffset, SetupLength+1)
			return b
		}(), false},
		{"negative frame length", func() []byte {
			b := append([]byte(nil), rttm...)
			shm.PutInt32(b, FrameLengthOffset, -1)
			return b
		}(), false},
		{"other version", func() []byte {
			b := append([]byte(nil), setup...)
			b[VersionOffset] = 1
			return b
		}(), false},
		{"unknown type", func() []byte {
			b := append([]byte(nil), setup...)
			shm.PutUint16(b, TypeOffset, 0x55)
			return b
		}(), false},
	} {
		if got := ValidDataSocketFrame(c.b); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// FuzzDataPacketLength: whatever the datagram, a DATA/PAD run that passes
// fits its term from its offset (the receiver copies len(b) bytes there),
// and moves the stream by at least its length, aligned, and never past
// the term.
func FuzzDataPacketLength(f *testing.F) {
	f.Add(frames(0, [2]int32{100, TypeData}), int32(0), uint8(16))
	f.Add(frames(64<<10-128, [2]int32{64, TypeData}, [2]int32{64, TypePad}), int32(64<<10-128), uint8(16))
	f.Add(frames(344501, [2]int32{64, TypeData}), int32(344501), uint8(16))
	f.Fuzz(func(t *testing.T, b []byte, termOffset int32, bits uint8) {
		if len(b) < DataHeaderLength {
			return
		}
		termLength := 1 << (16 + bits%15)
		n := DataPacketLength(b, termOffset, termLength)
		if n < 0 {
			return
		}
		if int64(termOffset)+int64(len(b)) > int64(termLength) {
			t.Fatalf("%d bytes at %d passed for a term of %d", len(b), termOffset, termLength)
		}
		if n == 0 && !IsHeartbeat(b) || n > 0 && (n < len(b) || n%logbuffer.FrameAlignment != 0 || int(termOffset)+n > termLength) {
			t.Fatalf("%d bytes at %d of a %d term moved the stream by %d", len(b), termOffset, termLength, n)
		}
	})
}
