package replica

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand"
	"net"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/rdb"
)

// fakeApplier records what the link applies; it answers ApplyMaster by
// splitting whole RESP commands (no MULTI).
type fakeApplier struct {
	up      bool
	syncs   int
	loading bool
	keys    []string
	cmds    []string
	resets  int
	ends    []bool // EndFullSync's loaded, call by call
	refuse  string // LoadEntry refuses this key
}

func (f *fakeApplier) SetMasterLink(up bool) { f.up = up }
func (f *fakeApplier) BeginFullSync()        { f.syncs++; f.loading = true; f.keys = nil }
func (f *fakeApplier) LoadEntry(e *rdb.Entry) error {
	if string(e.Key) == f.refuse && f.refuse != "" {
		return fmt.Errorf("key %q refused", e.Key)
	}
	f.keys = append(f.keys, fmt.Sprintf("%d:%s=%s%s", e.DB, e.Key, e.Str, bytes.Join(e.Items, []byte(","))))
	return nil
}
func (f *fakeApplier) EndFullSync(loaded bool) { f.loading = false; f.ends = append(f.ends, loaded) }
func (f *fakeApplier) Reserve(db, keys int)    {}
func (f *fakeApplier) ResetMaster()            { f.resets++ }
func (f *fakeApplier) ApplyMaster(in []byte, maxCmds int) (consumed, applied, getack int) {
	for consumed < len(in) {
		args, n, err := resp.ReadCommand(in[consumed:], nil, &resp.Limits{})
		if err != nil || n == 0 {
			break
		}
		consumed += n
		applied += n
		if len(args) >= 2 && strings.EqualFold(string(args[1]), "getack") {
			getack = n
			break
		}
		f.cmds = append(f.cmds, string(bytes.Join(args, []byte(" "))))
	}
	return consumed, applied, getack
}

// primary is a scripted Redis primary on a loopback listener.
type primary struct {
	t  *testing.T
	ln net.Listener
}

type primaryConn struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func (p *primary) accept() *primaryConn {
	p.t.Helper()
	c, err := p.ln.Accept()
	if err != nil {
		p.t.Error(err)
		return nil
	}
	return &primaryConn{t: p.t, c: c, br: bufio.NewReader(c)}
}

// expect reads one command and checks it starts with want.
func (pc *primaryConn) expect(want string) string {
	pc.t.Helper()
	_ = pc.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var buf []byte
	for {
		args, n, err := resp.ReadCommand(buf, nil, &resp.Limits{})
		if err != nil {
			pc.t.Errorf("bad command from the replica: %v", err)
			return ""
		}
		if n > 0 {
			got := string(bytes.Join(args, []byte(" ")))
			if !strings.HasPrefix(got, want) {
				pc.t.Errorf("the replica sent %q, want %q", got, want)
			}
			return got
		}
		b, err := pc.br.ReadByte()
		if err != nil {
			pc.t.Errorf("waiting for %q: %v", want, err)
			return ""
		}
		buf = append(buf, b)
	}
}

func (pc *primaryConn) send(s string) {
	if _, err := pc.c.Write([]byte(s)); err != nil {
		pc.t.Error(err)
	}
}

func testRDB(t *testing.T) []byte {
	var b bytes.Buffer
	e := rdb.NewEncoder(&b, rdb.EncoderOptions{})
	_ = e.WriteHeader()
	_ = e.SelectDB(0, 2, 0)
	_ = e.Write([]byte("s"), &rdb.Value{Kind: rdb.KindString, Str: []byte("v")}, rdb.NoExpiry)
	_ = e.Write([]byte("l"), &rdb.Value{Kind: rdb.KindList, Items: [][]byte{[]byte("a"), []byte("b")}}, rdb.NoExpiry)
	_ = e.SelectDB(2, 1, 0)
	_ = e.Write([]byte("big"), &rdb.Value{Kind: rdb.KindString, Str: bytes.Repeat([]byte("x"), 200000)}, rdb.NoExpiry)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// testClock is the base of the loop clock pollUntil hands Poll
// (monotonic nanoseconds, as the server's loop's).
var testClock = time.Now()

// pollUntil polls l as the loop would until cond holds.
func pollUntil(t *testing.T, l *Link, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (link state %s, offset %d)", what, l.state, l.ids.Offset)
		}
		if l.Poll(int64(time.Since(testClock))) == 0 {
			time.Sleep(time.Millisecond)
		}
	}
}

// The handshake Redis 7.0's replica sends, a diskless full sync with
// keepalives before the snapshot, the ACK offsets (after the load, and
// for a GETACK excluding the GETACK), then a link loss resumed with PSYNC
// of the primary's id and offset+1, answered +CONTINUE.
func TestLinkHandshakeSyncAckAndResume(t *testing.T) {
	for _, form := range []string{"eof", "len"} {
		t.Run(form, func(t *testing.T) {
			p := newPrimary(t)
			ln := p.ln
			app := &fakeApplier{}
			l, err := New(Options{Apply: app, ListeningPort: 7777, MasterAuth: "pw", RetryDelay: 10 * time.Millisecond,
				AckEvery: time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			port := ln.Addr().(*net.TCPAddr).Port
			l.Follow("127.0.0.1", port)

			const id = "0123456789012345678901234567890123456789"
			payload := testRDB(t)
			done := make(chan struct{})
			ping := "*1\r\n$4\r\nPING\r\n"
			set := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"
			getack := "*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n"
			go func() {
				defer close(done)
				pc := p.accept()
				if pc == nil {
					return
				}
				pc.expect("PING")
				pc.send("-NOAUTH Authentication required.\r\n")
				pc.expect("AUTH pw")
				pc.expect("REPLCONF listening-port 7777")
				pc.expect("REPLCONF capa eof capa psync2")
				pc.send("+OK\r\n+OK\r\n+OK\r\n")
				pc.expect("PSYNC ? -1")
				pc.send("+FULLRESYNC " + id + " 100\r\n\n\n")
				mark := strings.Repeat("m", MarkLen)
				var body []byte
				if form == "eof" {
					body = append(append([]byte("$EOF:"+mark+"\r\n"), payload...), mark...)
				} else {
					body = append([]byte("$"+strconv.Itoa(len(payload))+"\r\n"), payload...)
				}
				for len(body) > 0 { // in small pieces: the ends of the transfer must be found whatever the reads
					n := min(len(body), 1+rand.Intn(5000))
					pc.send(string(body[:n]))
					body = body[n:]
				}
				pc.expect("REPLCONF ACK 100")
				pc.send(ping + set + getack)
				want := 100 + len(ping) + len(set)
				pc.expect("REPLCONF ACK " + strconv.Itoa(want))
				pc.c.Close()

				pc = p.accept()
				if pc == nil {
					return
				}
				pc.expect("PING")
				pc.send("+PONG\r\n")
				pc.expect("AUTH")
				pc.expect("REPLCONF listening-port")
				pc.expect("REPLCONF capa")
				pc.send("+OK\r\n+OK\r\n+OK\r\n")
				pc.expect("PSYNC " + id + " " + strconv.Itoa(want+len(getack)+1))
				pc.send("+CONTINUE " + id + "\r\n" + set)
				time.Sleep(200 * time.Millisecond)
				pc.c.Close()
			}()
			pollUntil(t, l, "the snapshot loaded", func() bool { return app.syncs == 1 && !app.loading && app.up })
			if fmt.Sprint(app.ends) != "[true]" {
				t.Fatalf("EndFullSync's loaded after a whole snapshot: %v, want [true]", app.ends)
			}
			want := []string{"0:s=v", "0:l=a,b", "2:big=" + strings.Repeat("x", 200000)}
			if fmt.Sprint(app.keys) != fmt.Sprint(want) {
				t.Fatalf("keys loaded %.200q, want %.200q", app.keys, want)
			}
			pollUntil(t, l, "the stream applied", func() bool { return len(app.cmds) >= 2 })
			pollUntil(t, l, "the partial resync and its stream", func() bool { return len(app.cmds) >= 3 && l.stats.PartialSyncs == 1 })
			if got, want := l.ids.Offset, int64(100+len(ping)+2*len(set)+len(getack)); got != want {
				t.Fatalf("offset %d, want %d", got, want)
			}
			<-done
			// REPLICAOF NO ONE: a new id, the primary's kept as the
			// secondary one, valid up to the offset + 1 (PSYNC2).
			off := l.ids.Offset
			l.Unfollow()
			ids := l.IDs()
			if ids.ID2 != id || ids.Offset2 != off+1 || len(ids.ID) != 40 || ids.ID == id || ids.Offset != off {
				t.Fatalf("ids after the promotion: %+v (the primary's id %s, offset %d)", ids, id, off)
			}
			if _, _, following := l.Following(); following || l.state != StateNone {
				t.Fatalf("still following after Unfollow (state %s)", l.state)
			}
		})
	}
}

// The end mark is found whatever the reads deliver, and the bytes before
// it come out whole.
func TestEOFReaderChunks(t *testing.T) {
	mark := []byte("3f9a1c0e6b7d2e4f8a5c1b0d9e7f6a3c2b1d0e9f") // random hex, as Redis makes it
	for _, size := range []int{0, 1, 39, 40, 41, 100000} {
		data := bytes.Repeat(mark[:MarkLen-1], size/(MarkLen-1)+1)[:size] // most of the mark, over and over
		src := iotest.OneByteReader(bytes.NewReader(append(append([]byte(nil), data...), mark...)))
		got, err := io.ReadAll(newEOFReader(src, mark))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("size %d: read %d bytes, %v", size, len(got), err)
		}
		if _, err := io.ReadAll(newEOFReader(bytes.NewReader(data), mark)); err != io.ErrUnexpectedEOF {
			t.Fatalf("size %d without the mark: %v, want io.ErrUnexpectedEOF", size, err)
		}
	}
}

// A command longer than the loop's read-ahead bound (1 MiB) still arrives
// whole, and a primary silent for longer than repl-timeout is dropped and
// resumed with PSYNC.
func TestLinkLongCommandAndTimeout(t *testing.T) {
	p := newPrimary(t)
	ln := p.ln
	app := &fakeApplier{}
	l, err := New(Options{Apply: app, Timeout: time.Second, RetryDelay: 10 * time.Millisecond, AckEvery: time.Hour,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.Follow("127.0.0.1", ln.Addr().(*net.TCPAddr).Port)
	const id = "abcdefabcdefabcdefabcdefabcdefabcdefabcd"
	big := "*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$3000000\r\n" + strings.Repeat("v", 3000000) + "\r\n"
	done := make(chan struct{})
	go func() {
		defer close(done)
		handshake := func(pc *primaryConn) {
			pc.expect("PING")
			pc.send("+PONG\r\n")
			pc.expect("REPLCONF capa")
			pc.send("+OK\r\n")
		}
		pc := p.accept()
		if pc == nil {
			return
		}
		handshake(pc)
		pc.expect("PSYNC ? -1")
		payload := testRDB(t)
		pc.send("+FULLRESYNC " + id + " 0\r\n$" + strconv.Itoa(len(payload)) + "\r\n" + string(payload))
		pc.expect("REPLCONF ACK 0")
		for s := big; len(s) > 0; {
			n := min(len(s), 100000)
			pc.send(s[:n])
			s = s[n:]
		}
		// Silent from here, the connection left open: the replica must
		// give up on it after repl-timeout.
		pc2 := p.accept()
		if pc2 == nil {
			return
		}
		defer pc.c.Close()
		handshake(pc2)
		pc2.expect("PSYNC " + id + " " + strconv.Itoa(len(big)+1))
		pc2.send("+CONTINUE\r\n")
		time.Sleep(100 * time.Millisecond)
		pc2.c.Close()
	}()
	pollUntil(t, l, "the 3 MB command applied", func() bool { return len(app.cmds) == 1 })
	if len(app.cmds[0]) != len("SET big ")+3000000 {
		t.Fatalf("the long command arrived as %d bytes", len(app.cmds[0]))
	}
	// The silence counts from the last byte read, on the clock the test
	// polls the link with: timed from here instead, a test held off a CPU
	// between that read and here would see a drop sooner than it was.
	silentFrom := l.lastRead
	pollUntil(t, l, "the silent primary dropped and the link resumed with +CONTINUE", func() bool { return l.stats.PartialSyncs == 1 })
	if d := time.Duration(int64(time.Since(testClock)) - silentFrom); d < time.Second {
		t.Fatalf("the link was dropped after %v of silence, before repl-timeout (1s)", d)
	}
	<-done
}

// The batch a full resynchronisation hands to the loop keeps every field of
// a decoded key, its access record (IDLE, FREQ) included.
func TestBatchKeepsEveryField(t *testing.T) {
	b := newBatch()
	in := rdb.Entry{DB: 3, Key: []byte("k"), Expiry: 1234, Type: 4, Idle: 77, Freq: 9,
		Value: rdb.Value{Kind: rdb.KindZSet, Items: [][]byte{[]byte("m")}, Scores: []float64{1.5}}}
	b.add(&in)
	got := b.ents[0]
	if got.DB != 3 || string(got.Key) != "k" || got.Expiry != 1234 || got.Type != 4 || got.Idle != 77 || got.Freq != 9 ||
		got.Kind != rdb.KindZSet || len(got.Items) != 1 || string(got.Items[0]) != "m" || len(got.Scores) != 1 || got.Scores[0] != 1.5 {
		t.Fatalf("batch copy = %+v, want the fields of %+v", got, in)
	}
}

// oneAtATime is a fakeApplier that applies at most one command per call,
// as the engine does with StreamSlice 1.
type oneAtATime struct{ fakeApplier }

func (o *oneAtATime) ApplyMaster(in []byte, maxCmds int) (consumed, applied, getack int) {
	args, n, err := resp.ReadCommand(in, nil, &resp.Limits{})
	if err != nil || n == 0 {
		return 0, 0, 0
	}
	o.cmds = append(o.cmds, string(bytes.Join(args, []byte(" "))))
	return n, n, 0
}

// TestLinkDeadlineWithStreamLeft: stream commands left past a Poll's
// StreamSlice wake no descriptor, so Deadline is the last Poll's now (the
// loop neither parks nor rests over them) until they are applied, then
// never.
func TestLinkDeadlineWithStreamLeft(t *testing.T) {
	app := &oneAtATime{}
	l, err := New(Options{Apply: app, StreamSlice: 1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if d := l.Deadline(); d != math.MaxInt64 {
		t.Fatalf("Deadline() = %d with nothing to apply, want never", d)
	}
	l.stream = append(l.stream, strings.Repeat("*1\r\n$4\r\nPING\r\n", 3)...)
	for now := int64(1000); now < 1003; now++ {
		l.Poll(now)
		if d, left := l.Deadline(), len(l.stream)-l.head; left > 0 && d != now {
			t.Fatalf("after Poll(%d) with %d bytes left to apply: Deadline() = %d, want %d", now, left, d, now)
		}
	}
	if len(app.cmds) != 3 {
		t.Fatalf("applied %q, want three PINGs", app.cmds)
	}
	if d := l.Deadline(); d != math.MaxInt64 {
		t.Fatalf("Deadline() = %d with the stream applied, want never", d)
	}
}

// newPrimary returns a fake primary listening on a loopback port, closed
// when the test ends.
func newPrimary(t *testing.T) *primary {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return &primary{t: t, ln: ln}
}

// A full resynchronisation given up part-way (the link lost in the
// snapshot, a key the applier refuses, REPLICAOF NO ONE, the server
// closing the link at shutdown) ends with EndFullSync(false): the engine
// then collapses nothing.
func TestLinkAbandonedSyncEndsNotLoaded(t *testing.T) {
	for _, how := range []string{"lost", "refused", "unfollow", "close"} {
		t.Run(how, func(t *testing.T) {
			p := newPrimary(t)
			ln := p.ln
			app := &fakeApplier{}
			if how == "refused" {
				app.refuse = "l"
			}
			l, err := New(Options{Apply: app, RetryDelay: time.Hour, AckEvery: time.Hour,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				t.Fatal(err)
			}
			closed := false
			defer func() {
				if !closed {
					l.Close()
				}
			}()
			l.Follow("127.0.0.1", ln.Addr().(*net.TCPAddr).Port)
			payload := testRDB(t)
			cut := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				pc := p.accept()
				if pc == nil {
					return
				}
				defer pc.c.Close()
				pc.expect("PING")
				pc.send("+PONG\r\n")
				pc.expect("REPLCONF capa")
				pc.send("+OK\r\n")
				pc.expect("PSYNC")
				pc.send("+FULLRESYNC 0123456789012345678901234567890123456789 100\r\n")
				pc.send("$" + strconv.Itoa(len(payload)) + "\r\n")
				if how == "refused" {
					pc.send(string(payload))
				} else {
					pc.send(string(payload[:len(payload)/2])) // the rest never comes
				}
				<-cut
			}()
			defer func() { close(cut); <-done }()
			pollUntil(t, l, "the full sync begun", func() bool {
				return app.syncs == 1 && (how != "refused" && app.loading || len(app.ends) > 0)
			})
			switch how {
			case "lost":
				close(cut)
				<-done
				cut = make(chan struct{})
				pollUntil(t, l, "the sync given up", func() bool { return len(app.ends) > 0 })
			case "unfollow":
				l.Unfollow()
			case "close":
				l.Close()
				closed = true
			}
			if fmt.Sprint(app.ends) != "[false]" || app.loading {
				t.Fatalf("EndFullSync's loaded after a sync %s part-way: %v (loading %v), want [false]", how, app.ends, app.loading)
			}
		})
	}
}
