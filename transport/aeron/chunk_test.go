package aeron_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron/javadriver"
	"github.com/goblin-kv/goblin/client"
	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/proto/sbe"
	"github.com/goblin-kv/goblin/server"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/aeron"
)

// echo answers every request with the request itself: the transport
// alone, so a test chooses the exact length of both messages.
type echo struct{}

func (echo) OpenMessage(proto.Protocol) transport.MessageSession { return echo{} }
func (echo) ServeMessage(msg, out []byte) ([]byte, bool) {
	return append(out, msg...), false
}
func (echo) Close() {}

// pattern is n bytes whose every 4-byte word holds its own offset, so a
// piece delivered twice, lost or out of order shows. Its first byte is
// '*' so it is never taken for a goblin frame.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i>>((i%4)*8)) ^ 0x5a
	}
	if n > 0 {
		b[0] = '*'
	}
	return b
}

// TestChunkedEcho: messages of every length around the stream's maximum
// message (term length / 8, here 8 KiB of a 64 KiB term), many times
// it, and 1 and 4 MiB, go both ways over IPC and two-driver UDP (the
// server's in-process Go driver with a client on the Java driver, and on
// its own in-process Go driver): longer ones in chunks, each byte checked.
// A term this short makes the chunks wrap the terms many times over.
// Coverage cut: the largest is 4 MiB (64 term wraps each way), no longer
// 16 MiB (256), in every build, as it already was under -race, where the
// 16 MiB echo took two thirds of the test's 25 s, checking no more than
// 4 MiB does. Without -race it took 7-8 s over IPC and the Java client
// each, and 7 to 62 s over the Go client's driver (load 17-29), most of
// the test's 20-84 s; 16 MiB values still cross the chunking path whole
// in TestLargeValues.
// And under -race the two UDP runs stop at 1 MiB (16 term wraps each way):
// their 4 MiB echoes took 7 to 17 s of each run there; IPC keeps it.
func TestChunkedEcho(t *testing.T) {
	t.Parallel() // its own drivers and listeners; it times nothing
	needDriver(t)
	const term = 64 << 10
	max := term / 8
	piece := max - 16
	largest := 4 << 20
	sizes := []int{0, 1, max - 1, max, max + 1, piece, 2 * piece, 2*piece + 1, 1 << 20, largest}
	for _, kind := range []string{"ipc", "udp", "udp-go-client"} {
		t.Run(kind, func(t *testing.T) {
			media, _, _ := strings.Cut(kind, "-")
			sizes := sizes
			if testkit.RaceEnabled && media == "udp" {
				sizes = slices.DeleteFunc(slices.Clone(sizes), func(n int) bool { return n > 1<<20 })
			}
			o := aeron.Options{Media: media, Proto: proto.RESP, TermLength: term, Handler: echo{}}
			clientDir := ""
			if media == "udp" {
				o.Endpoint, o.Control = loopback(freeUDPPort(t)), loopback(freeUDPPort(t))
			}
			if kind == "udp" {
				clientDir = startDriver(t, javadriver.Options{}).Dir()
			}
			p := newInProcess(t, o, server.IdleYield)
			do := p.dialOptions(proto.RESP)
			do.TermLength = term
			if media == "udp" {
				do.Dir = clientDir
			}
			c := dial(t, do)
			for _, n := range sizes {
				msg := pattern(n)
				start := time.Now()
				got, err := roundTrip(c, msg)
				if err != nil {
					t.Fatalf("%d bytes: %v", n, err)
				}
				if !bytes.Equal(got, msg) {
					t.Fatalf("%d bytes: echo of %d bytes differs at %d", n, len(got), firstDiff(got, msg))
				}
				if n >= 1<<20 {
					t.Logf("%s: %d-byte echo (%d chunks each way) in %v", kind, n, (n+piece-1)/piece, time.Since(start).Round(time.Millisecond))
				}
			}
			st := p.stopStats()
			above := 0
			for _, n := range sizes {
				if n > max {
					above++
				}
			}
			if want := int64(2 * above); st.Chunked != want { // each size above max, each way
				t.Fatalf("chunked messages %d, want %d: %+v", st.Chunked, want, st)
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestLargeValues: SET and GET of values up to 16 MiB (the store's default
// maximum) through the real engine, both protocols, over IPC and
// two-driver UDP with the default 4 MiB terms (512 KiB messages). Before
// chunking a 13 MB GET failed with "server is gone: the server closed the
// response channel"; and over UDP a reply longer than the client driver's
// receiver window (128 KiB) never arrived while the client waited for the
// whole message before consuming any of it. Under -race the 13 MB value is
// left out: the 16 MiB one still crosses the same chunking path, larger,
// and the two cost half the test's time there. And under -race the 16 MiB
// value goes once per medium and once per protocol (ipc/sbe, udp/resp),
// not in all four runs: it took 10 to 37 s of each run's 15 to 42 s
// there, and the 1 MiB value, two chunks and eight receiver windows, still
// takes the chunked path in the other two.
func TestLargeValues(t *testing.T) {
	t.Parallel() // its own drivers and listeners; it times nothing
	needDriver(t)
	sizes := []int{0, 1, 100 << 10, 200 << 10, 512<<10 - 100, 512 << 10, 512<<10 + 1, 1 << 20, 13_000_000, 16 << 20}
	if testkit.RaceEnabled {
		sizes = slices.DeleteFunc(sizes, func(n int) bool { return n == 13_000_000 })
	}
	for _, media := range []string{"ipc", "udp"} {
		clientDir := ""
		if media == "udp" {
			clientDir = startDriver(t, javadriver.Options{}).Dir()
		}
		for _, pr := range []proto.Protocol{proto.RESP, proto.SBE} {
			t.Run(media+"/"+pr.String(), func(t *testing.T) {
				sizes := sizes
				if testkit.RaceEnabled && (media == "ipc") == (pr == proto.RESP) {
					sizes = slices.DeleteFunc(slices.Clone(sizes), func(n int) bool { return n == 16<<20 })
				}
				o := aeron.Options{Media: media, Proto: pr}
				if media == "udp" {
					o.Endpoint, o.Control = loopback(freeUDPPort(t)), loopback(freeUDPPort(t))
				}
				p := newInProcess(t, o, server.IdleYield)
				tgt := fmt.Sprintf("aeron:ipc?proto=%s|dir=%s", pr, p.o.Dir)
				if media == "udp" {
					tgt = fmt.Sprintf("aeron:udp?endpoint=%s|control=%s|proto=%s|dir=%s", o.Endpoint, o.Control, pr, clientDir)
				}
				c := dialClient(t, tgt)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				defer cancel()
				for _, n := range sizes {
					v := pattern(n)
					key := fmt.Sprintf("v%d", n)
					start := time.Now()
					if err := c.Set(ctx, key, v, client.SetOptions{}); err != nil {
						t.Fatalf("SET %d bytes: %v", n, err)
					}
					set := time.Since(start)
					got, err := c.Get(ctx, key)
					if err != nil || !bytes.Equal(got, v) {
						t.Fatalf("GET %d bytes: %d bytes, %v", n, len(got), err)
					}
					if n == 16<<20 {
						t.Logf("%s %s: %d-byte value: SET %v, GET %v", media, pr, n, set.Round(time.Millisecond),
							(time.Since(start) - set).Round(time.Millisecond))
					}
				}
				if err := c.Ping(ctx); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

func dialClient(tb testing.TB, tgt string) *client.Client {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := client.Options{DialTimeout: time.Minute}.Dial(ctx, tgt)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// TestRequestLimit: a request longer than the server's MaxRequest is
// refused by the client before anything is sent, with an error naming the
// limit; the connection stays and serves the next call. A client that
// sends it anyway (the pieces written by hand) gets an error reply naming
// the limit, and its connection stays too.
func TestRequestLimit(t *testing.T) {
	needDriver(t)
	for _, pr := range []proto.Protocol{proto.RESP, proto.SBE} {
		t.Run(pr.String(), func(t *testing.T) {
			const limit = 1 << 20
			p := newInProcess(t, aeron.Options{Media: "ipc", Proto: pr, MaxRequest: limit}, server.IdleYield)
			c := dialClient(t, fmt.Sprintf("aeron:ipc?proto=%s|dir=%s", pr, p.o.Dir))
			ctx := context.Background()
			err := c.Set(ctx, "big", make([]byte, 2<<20), client.SetOptions{})
			if !errors.Is(err, transport.ErrMessageTooLarge) || !strings.Contains(err.Error(), "request limit of 1048576 bytes") ||
				errors.Is(err, transport.ErrServerGone) {
				t.Fatalf("SET of 2 MiB with a 1 MiB limit: %v", err)
			}
			t.Logf("client-side refusal: %v", err)
			if err := c.Set(ctx, "small", []byte("v"), client.SetOptions{}); err != nil {
				t.Fatalf("the next call: %v", err)
			}

			// By hand: the chunks of a 2 MiB request.
			conn := dial(t, p.dialOptions(pr))
			req := wireSet(pr, "big", make([]byte, 2<<20))
			conn.SetDeadline(time.Now().Add(time.Minute))
			if err := aeron.WriteChunksForTest(conn, req); err != nil {
				t.Fatal(err)
			}
			reply, err := conn.ReadAppend(nil)
			if err != nil || !bytes.Contains(reply, []byte("exceeds the server's request limit of 1048576 bytes")) {
				t.Fatalf("reply to a 2 MiB request sent anyway: %q, %v", reply, err)
			}
			r, err := roundTrip(conn, wireSet(pr, "k", []byte("v")))
			if err != nil {
				t.Fatalf("after the refused request: %q, %v", r, err)
			}
			st := p.stopStats()
			if st.TooLarge != 1 || st.Gone != 0 || st.Accepted != 2 {
				t.Fatalf("stats %+v, want one request too large, two clients accepted (no redial) and nobody gone", st)
			}
		})
	}
}

// stopStats stops the loop and returns the server's stats (read once the
// loop goroutine, their only reader, is done).
func (p *inProcess) stopStats() aeron.Stats {
	p.loop.Stop()
	<-p.loop.Done()
	var st aeron.Stats
	p.srv.Stats(&st)
	return st
}

// sbeSet encodes an SBE SET request.
func sbeSet(key string, v []byte) []byte {
	var c sbe.Codec
	return c.AppendRequest(nil, &command.Request{CorrelationID: 7, Op: command.OpSet, Key: []byte(key), Value: v})
}

// wireSet encodes SET key value in protocol p.
func wireSet(p proto.Protocol, key string, v []byte) []byte {
	if p == proto.RESP {
		return resp.AppendCommand(nil, []byte("SET"), []byte(key), v)
	}
	return sbeSet(key, v)
}

// TestProtocolFromHello: the server's hello names its protocol. A client
// that names another fails at the dial, fast, with an error naming both
// and the fix; one that names none speaks the server's.
func TestProtocolFromHello(t *testing.T) {
	needDriver(t)
	for _, srvProto := range []proto.Protocol{proto.RESP, proto.SBE} {
		t.Run(srvProto.String(), func(t *testing.T) {
			p := newInProcess(t, aeron.Options{Media: "ipc", Proto: srvProto}, server.IdleYield)
			other := proto.SBE
			if srvProto == proto.SBE {
				other = proto.RESP
			}
			ctx := context.Background()
			// Warm the driver and the loop up, so the figure below is the
			// dial's own.
			dialClient(t, fmt.Sprintf("aeron:ipc?proto=%s|dir=%s", srvProto, p.o.Dir)).Ping(ctx)

			start := time.Now()
			_, err := client.Options{DialTimeout: time.Minute}.Dial(ctx, fmt.Sprintf("aeron:ipc?proto=%s|dir=%s", other, p.o.Dir))
			took := time.Since(start)
			want := fmt.Sprintf("speaks %s, this client %s: use proto=%s", srvProto, other, srvProto)
			if !errors.Is(err, transport.ErrProtocolMismatch) || !strings.Contains(err.Error(), want) {
				t.Fatalf("a %s client of a %s server: %v; want ErrProtocolMismatch saying %q", other, srvProto, err, want)
			}
			t.Logf("mismatch reported after %v: %v", took.Round(time.Millisecond), err)

			c := dialClient(t, "aeron:ipc?dir="+p.o.Dir)
			if err := c.Ping(ctx); err != nil {
				t.Fatalf("a client naming no protocol, %s server: %v", srvProto, err)
			}
			if err := c.Set(ctx, "k", []byte("v"), client.SetOptions{}); err != nil {
				t.Fatal(err)
			}
			if c.Target().Proto != srvProto {
				t.Fatalf("the client speaks %v to a %v server", c.Target().Proto, srvProto)
			}
		})
	}
}

// frame builds a goblin frame header by hand (the layout in frame.go)
// followed by piece.
func frame(kind, version byte, offset, total uint32, piece []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, 0x416267A7)
	b = append(b, kind, version, 0, 0)
	b = binary.LittleEndian.AppendUint32(b, offset)
	b = binary.LittleEndian.AppendUint32(b, total)
	return append(b, piece...)
}

// TestMalformedFrames: a client that sends a goblin frame the server
// cannot accept gets a protocol error naming the fault and is closed; the
// server and its other clients go on.
func TestMalformedFrames(t *testing.T) {
	needDriver(t)
	p := newInProcess(t, aeron.Options{Media: "ipc", Proto: proto.RESP}, server.IdleYield)
	cases := []struct {
		name string
		msgs [][]byte
		want string
	}{
		{"first piece not at 0", [][]byte{frame(2, 1, 5, 100, []byte("xx"))}, "a message starts with a piece at 5"},
		{"piece past the total", [][]byte{frame(2, 1, 0, 3, []byte("four"))}, "piece of 4 bytes at 0 of a 3-byte message"},
		{"empty piece", [][]byte{frame(2, 1, 0, 3, nil)}, "piece of 0 bytes"},
		{"gap", [][]byte{frame(2, 1, 0, 10, []byte("abc")), frame(2, 1, 4, 10, []byte("def"))}, "piece at 4 of a 10-byte message, want 3 of 10"},
		{"total changes", [][]byte{frame(2, 1, 0, 10, []byte("abc")), frame(2, 1, 3, 11, []byte("def"))}, "want 3 of 10"},
		{"hello from a client", [][]byte{frame(1, 1, 0, 0, nil)}, "want a chunk, got a frame of kind 1"},
		{"unknown version", [][]byte{frame(2, 9, 0, 3, []byte("abc"))}, "chunk version 9"},
		{"bare magic", [][]byte{frame(2, 1, 0, 0, nil)[:4]}, "want a chunk, got 4 bytes"},
	}
	other := dial(t, p.dialOptions(proto.RESP))
	for _, tc := range cases {
		c := dial(t, p.dialOptions(proto.RESP))
		c.SetDeadline(time.Now().Add(time.Minute))
		for _, m := range tc.msgs {
			if err := c.Write(m); err != nil {
				t.Fatalf("%s: write: %v", tc.name, err)
			}
		}
		r, err := c.ReadAppend(nil)
		if err != nil || !strings.HasPrefix(string(r), "-ERR Protocol error: aeron transport: malformed goblin frame") ||
			!strings.Contains(string(r), tc.want) {
			t.Fatalf("%s: reply %q, %v; want a protocol error saying %q", tc.name, r, err, tc.want)
		}
		if _, err := c.ReadAppend(nil); !errors.Is(err, transport.ErrServerGone) {
			t.Fatalf("%s: after the error: %v, want the connection closed", tc.name, err)
		}
		if r, err := roundTrip(other, resp.AppendCommandString(nil, "PING")); err != nil || string(r) != "+PONG\r\n" {
			t.Fatalf("%s: another client: %q, %v", tc.name, r, err)
		}
	}
	if st := p.stopStats(); st.Malformed != int64(len(cases)) {
		t.Fatalf("stats %+v, want %d malformed", st, len(cases))
	}
}

// TestClientMemoryBudget: clients that stop half-way through long chunked
// requests hold the pieces sent so far; past MaxClientMemory in total the
// one holding the most is dropped, the others stay and are served.
func TestClientMemoryBudget(t *testing.T) {
	needDriver(t)
	p := newInProcess(t, aeron.Options{Media: "ipc", Proto: proto.RESP, MaxClientMemory: 8 << 20}, server.IdleYield)
	small, big, other := dial(t, p.dialOptions(proto.RESP)), dial(t, p.dialOptions(proto.RESP)), dial(t, p.dialOptions(proto.RESP))
	req := make([]byte, 20<<20)
	req[0] = '*'
	for _, c := range []*aeron.Conn{small, big} {
		c.SetDeadline(time.Now().Add(time.Minute))
	}
	piece := 512<<10 - 16
	if err := aeron.WritePiecesForTest(small, req, (3<<20)/piece); err != nil { // about 3 MiB
		t.Fatal(err)
	}
	if r, err := roundTrip(other, resp.AppendCommandString(nil, "PING")); err != nil || string(r) != "+PONG\r\n" {
		t.Fatalf("PING: %q, %v", r, err)
	}
	if err := aeron.WritePiecesForTest(big, req, (7<<20)/piece); err != nil { // about 7 MiB: 10 in all
		t.Fatal(err)
	}
	if _, err := big.ReadAppend(nil); !errors.Is(err, transport.ErrServerGone) {
		t.Fatalf("the client holding the most: %v, want it dropped", err)
	}
	if r, err := roundTrip(other, resp.AppendCommandString(nil, "PING")); err != nil || string(r) != "+PONG\r\n" {
		t.Fatalf("PING after the eviction: %q, %v", r, err)
	}
	st := p.stopStats()
	if st.Evicted != 1 || st.Gone != 0 || st.Dropped != 0 || st.Buffered < 2<<20 || st.Buffered > 8<<20 {
		t.Fatalf("stats %+v: want one client evicted, no other gone, the small one's pieces still counted", st)
	}
	t.Logf("evicted the 7 MiB client at an 8 MiB limit; %d bytes still buffered for the 3 MiB one", st.Buffered)
}
