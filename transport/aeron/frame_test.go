package aeron

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/proto/sbe"
)

// chunks cuts msg into the chunk frames a sender writes for a stream whose
// maximum message is max.
func chunks(msg []byte, max int) [][]byte {
	var out [][]byte
	piece := max - frameHeaderLen
	var hdr [frameHeaderLen]byte
	for off := 0; off < len(msg); off += piece {
		putChunkHeader(&hdr, off, len(msg))
		out = append(out, append(hdr[:], msg[off:min(off+piece, len(msg))]...))
	}
	return out
}

func TestFramesAreNeverMessages(t *testing.T) {
	var c sbe.Codec
	msgs := [][]byte{
		resp.AppendCommandString(nil, "PING"),
		resp.AppendError(nil, "ERR x"),
		[]byte("+OK\r\n"), []byte("$-1\r\n"), []byte(":1\r\n"), []byte("*0\r\n"),
		c.AppendRequest(nil, &command.Request{CorrelationID: 1, Op: command.OpPing, Compact: true}),
		c.AppendRequest(nil, &command.Request{CorrelationID: 1, Op: command.OpSet, Key: []byte("k"), Value: []byte("v")}),
		c.AppendRequest(nil, &command.Request{CorrelationID: 1, Op: command.OpMGet, Key: []byte("k"), Args: [][]byte{[]byte("a")}}),
		c.AppendReply(nil, &command.Reply{CorrelationID: 1, Kind: command.Simple, Value: []byte("PONG"), Compact: true}),
		c.AppendReply(nil, &command.Reply{CorrelationID: 1, Kind: command.Bulk, Value: []byte("v")}),
		c.AppendReply(nil, &command.Reply{CorrelationID: 1, Kind: command.Array, Items: []command.Item{{Kind: command.Nil}}}),
	}
	for _, m := range msgs {
		if isFrame(m) {
			t.Errorf("%q is taken for a goblin frame", m)
		}
	}
	for _, f := range [][]byte{appendHello(nil, hello{proto: proto.SBE, maxRequest: 5}), chunks([]byte("abc"), 17)[0]} {
		if !isFrame(f) {
			t.Errorf("% x is not taken for a frame", f)
		}
	}
}

func TestHelloRoundTrip(t *testing.T) {
	for _, h := range []hello{{proto.RESP, 64 << 20}, {proto.SBE, 1}, {proto.SBE, MaxChunkedMessage}} {
		got, err := parseHello(appendHello(nil, h))
		if err != nil || got != h {
			t.Fatalf("%+v came back as %+v, %v", h, got, err)
		}
	}
	if got, _ := parseHello(appendHello(nil, hello{proto.RESP, 1 << 40})); got.maxRequest != MaxChunkedMessage {
		t.Fatalf("a limit past 4 GiB reads %d", got.maxRequest)
	}
	bad := appendHello(nil, hello{proto.SBE, 1})
	bad[6] = 9
	if _, err := parseHello(bad); err == nil {
		t.Fatal("a hello naming protocol 9 was accepted")
	}
}

// FuzzFrames feeds arbitrary messages to what the server and the client do
// with goblin frames: parse a hello, parse chunks and gather them into a
// message (in keep and discard mode), and make error replies from their
// bytes. None may panic; a gathered message is exactly its pieces. Then
// the fuzzed bytes, cut into chunks the way a sender cuts them, must come
// back whole.
func FuzzFrames(f *testing.F) {
	f.Add([]byte{}, uint16(17))
	f.Add(appendHello(nil, hello{proto.SBE, 1 << 20}), uint16(100))
	for _, c := range chunks(bytes.Repeat([]byte("0123456789"), 10), 40) {
		f.Add(c, uint16(40))
	}
	f.Add(append(chunks([]byte("abcdefgh"), 20)[0], chunks([]byte("abcdefgh"), 20)[1]...), uint16(20))
	f.Add(binary.LittleEndian.AppendUint32(nil, frameMagic), uint16(16))
	f.Fuzz(func(t *testing.T, data []byte, max uint16) {
		// As received: data cut into messages at every frame magic.
		var a, d assembly
		d.discard = true
		var pieces []byte
		for _, msg := range splitAtMagic(data) {
			parseHello(msg)
			errorReply(nil, proto.SBE, msg, "ERR x")
			errorReply(nil, proto.RESP, msg, "ERR x")
			ch, err := parseChunk(msg)
			if err != nil {
				a.reset()
				d.reset()
				d.discard = true
				pieces = pieces[:0]
				continue
			}
			if ch.offset+len(ch.piece) > ch.total || len(ch.piece) == 0 {
				t.Fatalf("accepted a piece of %d bytes at %d of %d", len(ch.piece), ch.offset, ch.total)
			}
			if !a.inProgress() {
				pieces = pieces[:0]
			}
			done, err := a.add(ch)
			dDone, dErr := d.add(ch)
			if done != dDone || (err == nil) != (dErr == nil) {
				t.Fatalf("keep and discard disagree: %v %v / %v %v", done, err, dDone, dErr)
			}
			if err != nil {
				a.reset()
				d.reset()
				d.discard = true
				continue
			}
			pieces = append(pieces, ch.piece...)
			if len(d.buf) != 0 || d.pos != len(pieces) && !done {
				t.Fatalf("discarding assembly kept %d bytes at %d", len(d.buf), d.pos)
			}
			if done {
				if !bytes.Equal(a.buf, pieces) || len(a.buf) != ch.total {
					t.Fatalf("gathered %d bytes, pieces %d, total %d", len(a.buf), len(pieces), ch.total)
				}
				pieces = pieces[:0]
			}
		}
		// As sent: data as one message, in chunks.
		m := int(max)%4096 + frameHeaderLen + 1
		var g assembly
		for i, c := range chunks(data, m) {
			if len(c) > m {
				t.Fatalf("chunk %d is %d bytes, max %d", i, len(c), m)
			}
			ch, err := parseChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			done, err := g.add(ch)
			if err != nil {
				t.Fatal(err)
			}
			if done && !bytes.Equal(g.buf, data) {
				t.Fatalf("%d bytes came back as %d", len(data), len(g.buf))
			}
		}
	})
}

// splitAtMagic cuts b before every occurrence of the frame magic after its
// start, so a fuzzed input holds a sequence of messages.
func splitAtMagic(b []byte) [][]byte {
	var magic [4]byte
	binary.LittleEndian.PutUint32(magic[:], frameMagic)
	var out [][]byte
	for len(b) > 0 {
		i := bytes.Index(b[1:], magic[:])
		if i < 0 {
			return append(out, b)
		}
		out = append(out, b[:i+1])
		b = b[i+1:]
	}
	return out
}
