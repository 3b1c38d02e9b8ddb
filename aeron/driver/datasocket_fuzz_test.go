package driver

import (
	"encoding/binary"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron/internal/command"
	"github.com/goblin-kv/goblin/aeron/internal/errorlog"
	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/aeron/internal/wire"
	"github.com/goblin-kv/goblin/internal/shm"
)

// The fuzzed receiver: the stream it subscribes to and, for
// FuzzDataSocketImage, the image it has before the fuzzed datagrams come.
const (
	fuzzSession       = 77
	fuzzInitialTermID = 100
	fuzzTermLength    = 64 << 10
	fuzzUnfragmented  = logbuffer.FlagBegin | logbuffer.FlagEnd
)

// A fuzz input is a script of steps, each an op byte and what follows:
//
//	op%4 == 0: a datagram, its length the next two bytes (little endian,
//	           at most 1500), its bytes after them
//	op%4 == 1: a DATA (or PAD) frame of session 77 made from the next six
//	           bytes: term id 100 + int8, term offset uint16 × 32, frame
//	           length uint16, flags (bit 0: PAD), as many bytes as the
//	           frame's aligned length (at most 1408) — well formed but
//	           anywhere, overlapping, in any order
//	op%4 == 2: the clocks move on by op>>2 times 10 ms
//	op%4 == 3: the subscribers read up to rcv-pos
//
// so the fuzzer can put SETUPs, DATA, heartbeats and time in any order.
const (
	fuzzOpDatagram = 0
	fuzzOpFrame    = 1
	fuzzOpAdvance  = 2
	fuzzOpConsume  = 3
	fuzzMaxDgram   = 1500
)

// fuzzScript builds a script.
type fuzzScript []byte

func (s fuzzScript) datagram(p []byte) fuzzScript {
	s = append(s, fuzzOpDatagram)
	s = binary.LittleEndian.AppendUint16(s, uint16(len(p)))
	return append(s, p...)
}

func (s fuzzScript) frame(termDelta int8, offset32, frameLength uint16, flags byte) fuzzScript {
	s = append(s, fuzzOpFrame, byte(termDelta))
	s = binary.LittleEndian.AppendUint16(s, offset32)
	s = binary.LittleEndian.AppendUint16(s, frameLength)
	return append(s, flags)
}

// scriptFrame is the datagram of a fuzzOpFrame step.
func scriptFrame(b []byte) []byte {
	termID := fuzzInitialTermID + int32(int8(b[0]))
	offset := int32(binary.LittleEndian.Uint16(b[1:])) * logbuffer.FrameAlignment
	frameLength := int32(binary.LittleEndian.Uint16(b[3:]))
	flags := b[5]
	n := min(max(shm.Align(int(frameLength), logbuffer.FrameAlignment), logbuffer.HeaderLength), 1408)
	p := make([]byte, n)
	wire.PutHeartbeat(p, flags&^1, fuzzSession, 10, termID, offset)
	shm.PutInt32(p, 0, frameLength)
	if flags&1 != 0 {
		shm.PutUint16(p, wire.TypeOffset, wire.TypePad)
	}
	for i := logbuffer.HeaderLength; i < n; i++ {
		p[i] = byte(i)
	}
	return p
}

func (s fuzzScript) advance(tens byte) fuzzScript { return append(s, fuzzOpAdvance|tens<<2) }
func (s fuzzScript) consume() fuzzScript          { return append(s, fuzzOpConsume) }

// fuzzSetup is a valid SETUP of the fuzzed stream.
func fuzzSetup(session, activeTermID, termOffset int32) []byte {
	b := make([]byte, wire.SetupLength)
	wire.PutSetup(b, &wire.SetupFields{SessionID: session, StreamID: 10, InitialTermID: fuzzInitialTermID,
		ActiveTermID: activeTermID, TermOffset: termOffset, TermLength: fuzzTermLength, MTU: 1408})
	return b
}

// fuzzData is a datagram of frames of the fuzzed stream, each payload
// bytes long, the first at termID/termOffset.
func fuzzData(session, termID, termOffset int32, flags byte, payloads ...int) []byte {
	var b []byte
	off := termOffset
	for _, n := range payloads {
		frame := logbuffer.HeaderLength + n
		aligned := shm.Align(frame, logbuffer.FrameAlignment)
		f := make([]byte, aligned)
		wire.PutHeartbeat(f, flags, session, 10, termID, off)
		shm.PutInt32(f, 0, int32(frame))
		for i := logbuffer.HeaderLength; i < frame; i++ {
			f[i] = byte(i)
		}
		b = append(b, f...)
		off += int32(aligned)
	}
	return b
}

// fuzzSeeds are scripts of real traffic and of the two datagrams that
// crashed the receiver, by the name of their corpus file under
// testdata/fuzz/FuzzDataSocket and FuzzDataSocketImage.
func fuzzSeeds() []namedScript {
	pad := fuzzData(fuzzSession, fuzzInitialTermID, fuzzTermLength-64, fuzzUnfragmented, 0)
	shm.PutInt32(pad, 0, 64)
	shm.PutUint16(pad, wire.TypeOffset, wire.TypePad)
	heartbeat := make([]byte, wire.DataHeaderLength)
	wire.PutHeartbeat(heartbeat, 0, fuzzSession, 10, fuzzInitialTermID, 256)
	eos := make([]byte, wire.DataHeaderLength)
	wire.PutHeartbeat(eos, fuzzUnfragmented|logbuffer.FlagEOS, fuzzSession, 10, fuzzInitialTermID, 256)
	badData := fuzzData(fuzzSession, fuzzInitialTermID-5, 344501, fuzzUnfragmented, 32)
	rttm := make([]byte, wire.RTTMLength)
	wire.PutRTTM(rttm, wire.RTTMFlagReply, fuzzSession, 10, 12345, 0, 0)
	return []namedScript{
		// A stream from its SETUP: frames in order, a gap and its fill,
		// a heartbeat, reading, a term's closing pad, end of stream.
		{"seed-stream", fuzzScript(nil).datagram(fuzzSetup(fuzzSession, fuzzInitialTermID, 0)).
			datagram(fuzzData(fuzzSession, fuzzInitialTermID, 0, fuzzUnfragmented, 32, 100)).
			datagram(fuzzData(fuzzSession, fuzzInitialTermID, 256, fuzzUnfragmented, 64)).
			advance(1).
			datagram(fuzzData(fuzzSession, fuzzInitialTermID, 224, fuzzUnfragmented, 0)).
			datagram(heartbeat).consume().advance(30).datagram(rttm).
			datagram(pad).datagram(eos).advance(100)},
		// Data before SETUP (asks for one), then the SETUP mid-stream.
		{"seed-data-before-setup", fuzzScript(nil).datagram(fuzzData(fuzzSession+1, fuzzInitialTermID+1, 4096, fuzzUnfragmented, 1000)).
			advance(5).datagram(fuzzSetup(fuzzSession+1, fuzzInitialTermID+1, 4096)).
			datagram(fuzzData(fuzzSession+1, fuzzInitialTermID+1, 4096, logbuffer.FlagBegin, 1376)).consume()},
		// Frames made by the script: out of order, a gap, one inside
		// another's bytes, a pad, the next term.
		{"seed-frames", fuzzScript(nil).datagram(fuzzSetup(fuzzSession, fuzzInitialTermID, 0)).
			frame(0, 0, 64, fuzzUnfragmented).frame(0, 4, 1000, fuzzUnfragmented).frame(0, 2, 64, fuzzUnfragmented).
			advance(1).frame(0, 10, 96, fuzzUnfragmented).consume().frame(0, 2040, 1280, 1).
			frame(1, 0, 64, fuzzUnfragmented).advance(3).consume()},
		// The crashes: DATA off the term (slice bounds out of range in
		// insertFrames), a SETUP before its initial term (index out of
		// range [-1] in warmAhead).
		{"seed-crash-insertframes", fuzzScript(nil).datagram(fuzzSetup(fuzzSession, fuzzInitialTermID, 0)).datagram(badData)},
		{"seed-crash-warmahead", fuzzScript(nil).datagram(fuzzSetup(fuzzSession+2, fuzzInitialTermID-1, 0)).advance(1)},
	}
}

type namedScript struct {
	name   string
	script fuzzScript
}

var updateFuzzSeeds = flag.Bool("update-fuzz-seeds", false, "rewrite the data socket fuzz targets' seed corpus files")

// TestDataSocketFuzzSeedFiles: the seed corpus files under testdata/fuzz
// (which go test runs as FuzzDataSocket's and FuzzDataSocketImage's
// seeds) are the scripts fuzzSeeds builds; -update-fuzz-seeds rewrites
// them.
func TestDataSocketFuzzSeedFiles(t *testing.T) {
	for _, target := range []string{"FuzzDataSocket", "FuzzDataSocketImage"} {
		for _, s := range fuzzSeeds() {
			path := filepath.Join("testdata", "fuzz", target, s.name)
			want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", []byte(s.script))
			if *updateFuzzSeeds {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./aeron/driver/ -run TestDataSocketFuzzSeedFiles -args -update-fuzz-seeds writes it)", err)
			}
			if string(got) != want {
				t.Fatalf("%s is not the seed fuzzSeeds builds (rerun with -update-fuzz-seeds)", path)
			}
		}
	}
}

// fuzzReceiver is a hostileReceiver fed datagrams straight into its data
// socket's entry point, the test's socket as their source.
type fuzzReceiver struct {
	*hostileReceiver
	from      netip.AddrPort
	withImage bool
}

func newFuzzReceiver(f *testing.F, withImage bool) *fuzzReceiver {
	h := newHostileReceiver(f, func(o *Options) {
		o.StreamSessionLimit = 4
		o.MaxImagesLength = 3 * int64(logbuffer.ComputeLogLength(fuzzTermLength, defaultPageSize))
		o.MaxImageTermLength = 4 * fuzzTermLength
		o.ImageLivenessTimeout = 2 * time.Second
	})
	return &fuzzReceiver{hostileReceiver: h, from: h.conn.LocalAddr().(*net.UDPAddr).AddrPort(), withImage: withImage}
}

// run plays a script, checking after each step what no datagram may
// break, then lets every image go, so the next input starts from the
// same state.
func (r *fuzzReceiver) run(t *testing.T, script []byte) {
	r.play(t, script)
	r.reset(t)
}

func (r *fuzzReceiver) play(t *testing.T, script []byte) {
	if r.withImage {
		r.ep.onDataDatagram(&r.receiver, fuzzSetup(fuzzSession, fuzzInitialTermID, 0), r.from)
		if len(r.images) != 1 {
			t.Fatalf("%d images after the fixture's SETUP, want 1", len(r.images))
		}
	}
	for len(script) > 0 {
		op := script[0]
		script = script[1:]
		switch op % 4 {
		case fuzzOpAdvance:
			r.keepalive()
			r.manualDriver.advance(time.Duration(op>>2) * 10 * time.Millisecond)
		case fuzzOpConsume:
			r.consume()
			r.cycle(1)
		case fuzzOpFrame:
			if len(script) < 6 {
				script = nil
				break
			}
			p := scriptFrame(script)
			script = script[6:]
			r.ep.onDataDatagram(&r.receiver, p, r.from)
			r.cycle(1)
		default:
			if len(script) < 2 {
				script = nil
				break
			}
			n := min(int(binary.LittleEndian.Uint16(script)), len(script)-2, fuzzMaxDgram)
			p := script[2 : 2+n]
			script = script[2+n:]
			// A copy, as the receive batch's buffer is reused: the
			// driver may keep no reference to it past the call.
			r.ep.onDataDatagram(&r.receiver, append([]byte(nil), p...), r.from)
			r.cycle(1)
		}
		r.check(t)
	}
}

// check: no panic was recovered, the limits hold, and every image's
// positions are ones its log holds.
func (r *fuzzReceiver) check(t *testing.T) {
	t.Helper()
	l, _ := r.cncSections()
	errorlog.Read(l.ErrorLog, 0, func(rec errorlog.Record) {
		if strings.Contains(rec.Text, "panicked") {
			t.Fatalf("a datagram panicked the receiver: %s", rec.Text)
		}
	})
	if len(r.images) > 4 || r.imagesLength > r.opts.MaxImagesLength {
		t.Fatalf("%d images of %d bytes, past the limits (4, %d)", len(r.images), r.imagesLength, r.opts.MaxImagesLength)
	}
	for _, img := range r.images {
		hwm, rebuild := r.subPosition(img.hwm), r.subPosition(img.rebuild)
		if hwm < 0 || rebuild < 0 || hwm&(logbuffer.FrameAlignment-1) != 0 {
			t.Fatalf("image session %d: rcv-hwm %d, rcv-pos %d", img.sessionID, hwm, rebuild)
		}
	}
}

// consume moves the subscribers to rcv-pos, as readers do.
func (r *fuzzReceiver) consume() {
	for _, img := range r.images {
		rebuild := r.subPosition(img.rebuild)
		for _, s := range img.subs {
			r.setPosition(s, max(r.subPosition(s), rebuild))
		}
	}
}

// keepalive has the client's keepalive read in the next duty cycle, so
// the client (and its subscription) stays however long a script runs.
func (r *fuzzReceiver) keepalive() {
	if err := r.ring.Write(command.ClientKeepalive, command.AppendCorrelated(nil, r.client.id, 0)); err != nil {
		panic(err)
	}
}

// leap moves the clocks by dt in steps of a timer interval, two duty
// cycles and a client keepalive each: coarser than advance, enough for
// the images' timers, and cheap enough to run after every fuzz input.
func (r *fuzzReceiver) leap(dt time.Duration) {
	for dt > 0 {
		step := min(dt, r.opts.TimerInterval)
		r.keepalive()
		r.nowNs += int64(step)
		r.epochMs += step.Milliseconds()
		r.cycle(2)
		dt -= step
	}
	r.client.take()
}

// reset lets the images time out, drain (their readers read to the end),
// linger and go, and the sessions asked for SETUP be forgotten; then
// nothing of the input is left.
func (r *fuzzReceiver) reset(t *testing.T) {
	t.Helper()
	for range 6 {
		r.consume()
		r.leap(r.opts.ImageLivenessTimeout + time.Second)
		if len(r.images) == 0 && len(r.receiver.pendingSetups) == 0 {
			break
		}
	}
	// The images' logs leave the images length once the releaser has
	// freed them, on its own goroutine.
	for deadline := time.Now().Add(10 * time.Second); r.imagesLength != 0 && time.Now().Before(deadline); {
		r.cycle(1)
	}
	s := r.ep.streams[r.stream]
	if len(r.images) != 0 || r.imagesLength != 0 || len(r.receiver.pendingSetups) != 0 || s == nil || len(s.active) != 0 ||
		len(s.states) != 0 {
		t.Fatalf("after the images' liveness and linger: %d images of %d bytes, %d pending setups, stream %+v",
			len(r.images), r.imagesLength, len(r.receiver.pendingSetups), s)
	}
}

// FuzzDataSocket feeds scripts of datagrams (seeds: fuzzSeeds, in
// testdata/fuzz/FuzzDataSocket) and time to a receive
// endpoint's data socket entry point, on a real driver with a
// subscription and no image yet: whatever comes, the driver does not
// panic (nor recover from a panic), keeps to its image limits, and its
// images' positions stay in their logs; once the images time out nothing
// of them is left.
func FuzzDataSocket(f *testing.F) {
	r := newFuzzReceiver(f, false)
	f.Fuzz(func(t *testing.T, script []byte) { r.run(t, script) })
}

// FuzzDataSocketImage is FuzzDataSocket with an image of session 77
// (initial term 100, 64 KiB terms) made before each script.
func FuzzDataSocketImage(f *testing.F) {
	r := newFuzzReceiver(f, true)
	f.Fuzz(func(t *testing.T, script []byte) { r.run(t, script) })
}

// TestFuzzSeedsReachTheImage: the first seed is a working stream (an
// image whose rcv-pos moves past the gap it fills and whose subscribers
// read), so the fuzzer starts from inputs that get past the checks.
func TestFuzzSeedsReachTheImage(t *testing.T) {
	h := newHostileReceiver(t, nil)
	r := &fuzzReceiver{hostileReceiver: h, from: h.conn.LocalAddr().(*net.UDPAddr).AddrPort()}
	invalid := r.counters.Value(sysInvalidPackets)
	r.play(t, fuzzSeeds()[0].script)
	if len(r.images) != 1 {
		t.Fatalf("%d images after the first seed, want 1", len(r.images))
	}
	img := r.images[0]
	if rebuild := r.subPosition(img.rebuild); rebuild < 352 || r.subPosition(img.subs[0]) < 352 {
		t.Fatalf("rcv-pos %d, sub-pos %d after the first seed, want both at least 352 (its frames, gap filled)",
			rebuild, r.subPosition(img.subs[0]))
	}
	if !img.isEndOfStream {
		t.Fatal("the seed's end of stream was not seen")
	}
	if n := r.counters.Value(sysInvalidPackets) - invalid; n != 0 {
		t.Fatalf("%d invalid packets in the seed of valid traffic", n)
	}
	r.reset(t)
}
