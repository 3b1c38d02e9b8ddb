package client

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"slices"
	"strconv"
	"testing"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto/sbe"
)

// sbePeer is a tiny in-test SBE server over SOFH-framed Unix sockets: it
// keeps a map and answers PING, SET (NX), GET, DEL, INCR, MGET and DBSIZE,
// so the client's SBE codec can be tested before goblin-server speaks SBE.
// corrupt makes it answer with a wrong correlation id.
func sbePeer(tb testing.TB, corrupt bool) string {
	data := map[string][]byte{}
	return fakeServer(tb, func(conn net.Conn) {
		serveSBE(conn, func(req *command.Request, rep *command.Reply) {
			rep.Value = []byte("OK")
			if corrupt {
				rep.CorrelationID += 7
			}
			key := string(req.Key)
			switch req.Op {
			case command.OpPing:
				rep.Value = []byte("PONG")
			case command.OpSet:
				if _, ok := data[key]; ok && req.Flags&command.FlagNX != 0 {
					rep.Kind = command.Nil
				} else {
					data[key] = append([]byte{}, req.Value...)
				}
			case command.OpGet:
				if v, ok := data[key]; ok {
					rep.Kind, rep.Value = command.Bulk, v
				} else {
					rep.Kind, rep.Value = command.Nil, nil
				}
			case command.OpDel:
				rep.Kind, rep.Value = command.Integer, nil
				for _, k := range append([][]byte{req.Key}, req.Args...) {
					if _, ok := data[string(k)]; ok {
						delete(data, string(k))
						rep.Integer++
					}
				}
			case command.OpIncr:
				v, err := strconv.ParseInt(string(data[key]), 10, 64)
				if _, ok := data[key]; ok && err != nil {
					rep.Status, rep.Kind = command.NotInteger, command.Error
					rep.Value = []byte("ERR value is not an integer or out of range")
					break
				}
				data[key] = strconv.AppendInt(nil, v+1, 10)
				rep.Kind, rep.Integer, rep.Value = command.Integer, v+1, nil
			case command.OpMGet:
				rep.Kind, rep.Value = command.Array, nil
				for _, k := range append([][]byte{req.Key}, req.Args...) {
					if v, ok := data[string(k)]; ok {
						rep.Items = append(rep.Items, command.Item{Kind: command.Bulk, Value: v})
					} else {
						rep.Items = append(rep.Items, command.Item{Kind: command.Nil})
					}
				}
				rep.Integer = int64(len(rep.Items)) // an aggregate's element count (schema version 2)
			case command.OpDBSize:
				rep.Kind, rep.Integer, rep.Value = command.Integer, int64(len(data)), nil
			default:
				rep.Status, rep.Kind, rep.Value = command.UnknownCommand, command.Error, []byte("ERR unknown command")
			}
		})
	})
}

// serveSBE answers the SOFH-framed SBE requests read from conn: answer
// fills in each one's reply (a Simple reply with the request's correlation
// id to start with), and the replies to one read go out in one write. It
// returns when the connection closes or a request does not decode. Its
// buffers are reused, so a peer whose answer allocates nothing allocates
// nothing per request.
func serveSBE(conn net.Conn, answer func(req *command.Request, rep *command.Reply)) {
	var c sbe.Codec
	var req command.Request
	var rep command.Reply
	in := make([]byte, 0, 64<<10)
	out := make([]byte, 0, 64<<10)
	for {
		if cap(in)-len(in) < 4096 {
			in = slices.Grow(in, cap(in)) // a long request
		}
		n, err := conn.Read(in[len(in):cap(in)])
		if err != nil {
			return
		}
		in = in[:len(in)+n]
		out = out[:0]
		for {
			msg, used, err := sbe.ReadFrame(in, 0)
			if err != nil || used == 0 {
				break
			}
			if err := c.DecodeRequest(msg, &req); err != nil {
				return
			}
			rep = command.Reply{CorrelationID: req.CorrelationID, Kind: command.Simple}
			answer(&req, &rep)
			var start int
			out, start = sbe.BeginFrame(out)
			out = c.AppendReply(out, &rep)
			out = sbe.EndFrame(out, start)
			in = in[:copy(in, in[used:])]
		}
		if _, err := conn.Write(out); err != nil {
			return
		}
	}
}

func TestSBEAgainstPeer(t *testing.T) {
	c := dialT(t, "uds://"+sbePeer(t, false)+"?proto=sbe")
	ctx := ctxT(t)
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "k"); !errors.Is(err, ErrNil) {
		t.Fatalf("Get(missing) = %v, want ErrNil", err)
	}
	val := []byte("a\r\nb\x00")
	if err := c.Set(ctx, "k", val, SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "k", val, SetOptions{NX: true}); !errors.Is(err, ErrNil) {
		t.Fatalf("Set NX on an existing key = %v, want ErrNil", err)
	}
	if v, err := c.Get(ctx, "k"); err != nil || !bytes.Equal(v, val) {
		t.Fatalf("Get = %q, %v", v, err)
	}
	if n, err := c.Incr(ctx, "n"); err != nil || n != 1 {
		t.Fatalf("Incr = %d, %v", n, err)
	}
	var se *ServerError
	if _, err := c.Incr(ctx, "k"); !errors.As(err, &se) || se.Code != "ERR" {
		t.Fatalf("Incr on a string = %v, want *ServerError", err)
	}
	vals, err := c.MGet(ctx, "k", "nope", "n")
	if err != nil || len(vals) != 3 || !bytes.Equal(vals[0], val) || vals[1] != nil || string(vals[2]) != "1" {
		t.Fatalf("MGet = %q, %v", vals, err)
	}
	if n, err := c.Del(ctx, "k", "nope"); err != nil || n != 1 {
		t.Fatalf("Del = %d, %v", n, err)
	}
	if n, err := c.DBSize(ctx); err != nil || n != 1 {
		t.Fatalf("DBSize = %d, %v", n, err)
	}
	if _, err := c.Do(ctx, "NOSUCH"); err == nil || errors.As(err, &se) {
		t.Fatalf("Do(NOSUCH) over SBE = %v, want a client-side error", err)
	}
	if _, err := c.Do(ctx, "FLUSHDB"); !errors.As(err, &se) {
		t.Fatalf("Do(FLUSHDB) answered with an error reply = %v", err)
	}
	// A bad command in the middle of a pipeline fails it and drops the
	// connection, so the correlation ids stay in step afterwards.
	bad := c.Pipeline()
	for i := 0; i < 1500; i++ {
		bad.Do("SET", "x", i)
	}
	bad.Do("EVAL", "x")
	if _, err := bad.Exec(ctx); err == nil {
		t.Fatal("pipeline with a command SBE cannot carry succeeded")
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("Ping after a failed pipeline: %v", err)
	}
	p := c.Pipeline()
	for i := 0; i < 2000; i++ {
		p.Do("SET", "p"+strconv.Itoa(i), i)
	}
	p.Do("GET", "p1999")
	res, err := p.Exec(ctx)
	if err != nil || len(res) != 2001 || res[2000].String() != `"1999"` {
		t.Fatalf("pipeline: %d results, %v", len(res), err)
	}
}

// sbeCannedPeer answers PING with PONG, SET with OK and GET with a fixed
// value, allocating nothing itself, so that AllocsPerRun (which counts the
// whole process) sees only the client's allocations.
func sbeCannedPeer(tb testing.TB) string {
	return fakeServer(tb, func(conn net.Conn) {
		fixed := []byte("0123456789abcdef")
		pong, ok := []byte("PONG"), []byte("OK")
		serveSBE(conn, func(req *command.Request, rep *command.Reply) {
			rep.Value = ok
			switch req.Op {
			case command.OpPing:
				rep.Value = pong
			case command.OpGet:
				rep.Kind, rep.Value = command.Bulk, fixed
			}
		})
	})
}

func TestSBEHotPathDoesNotAllocate(t *testing.T) {
	c := dialT(t, "uds://"+sbeCannedPeer(t)+"?proto=sbe")
	ctx := context.Background()
	val := []byte("0123456789abcdef")
	dst := make([]byte, 0, 64)
	for name, f := range map[string]func(){
		"Ping": func() {
			if err := c.Ping(ctx); err != nil {
				t.Fatal(err)
			}
		},
		"Set": func() {
			if err := c.Set(ctx, "key", val, SetOptions{}); err != nil {
				t.Fatal(err)
			}
		},
		"GetAppend": func() {
			if v, err := c.GetAppend(ctx, dst[:0], "key"); err != nil || !bytes.Equal(v, val) {
				t.Fatalf("GetAppend = %q, %v", v, err)
			}
		},
	} {
		if a := testing.AllocsPerRun(200, f); a != 0 {
			t.Errorf("%s over SBE allocates %v times per call", name, a)
		}
	}
}

func TestSBECorrelationMismatch(t *testing.T) {
	c := dialT(t, "uds://"+sbePeer(t, true)+"?proto=sbe")
	if err := c.Ping(context.Background()); !errors.Is(err, ErrProtocol) {
		t.Fatalf("Ping answered with a wrong correlation id = %v, want ErrProtocol", err)
	}
}

func TestSBETranslate(t *testing.T) {
	s := &sbeCodec{}
	args := func(a ...string) [][]byte {
		out := make([][]byte, len(a))
		for i := range a {
			out[i] = []byte(a[i])
		}
		return out
	}
	var r command.Request
	if err := s.translate(&r, args("set", "k", "v", "nx", "get", "px", "1500")); err != nil {
		t.Fatal(err)
	}
	if r.Op != command.OpSet || r.Flags != command.FlagNX|command.FlagGet || r.Expiry != command.ExpiryPX || r.Expire != 1500 ||
		string(r.Key) != "k" || string(r.Value) != "v" {
		t.Fatalf("SET translated to %+v", r)
	}
	r = command.Request{}
	if err := s.translate(&r, args("MSET", "a", "1", "b", "2")); err != nil || r.Op != command.OpMSet || len(r.Args) != 2 {
		t.Fatalf("MSET translated to %+v, %v", r, err)
	}
	r = command.Request{}
	if err := s.translate(&r, args("incrby", "n", "-5")); err != nil || r.Op != command.OpIncrBy || r.Amount != -5 {
		t.Fatalf("INCRBY translated to %+v, %v", r, err)
	}
	r = command.Request{}
	if err := s.translate(&r, args("expire", "k", "5", "xx", "GT")); err != nil || r.Op != command.OpExpire ||
		r.Amount != 5 || r.Flags != command.FlagXX|command.FlagGT {
		t.Fatalf("EXPIRE with options translated to %+v, %v", r, err)
	}
	for _, bad := range [][]string{
		{"EXPIRE", "k", "5", "BOGUS"}, {"INCRBY", "n", "1", "NX"},
		{"SET", "k"}, {"SET", "k", "v", "EX"}, {"SET", "k", "v", "EX", "x"}, {"SET", "k", "v", "EX", "1", "PX", "2"},
		{"SET", "k", "v", "BOGUS"}, {"GET"}, {"MSET", "a", "1", "b"}, {"INCRBY", "n", "x"}, {"EVAL", "x"},
		// Integers as the server reads them over RESP: no '+', no leading zeros.
		{"INCRBY", "n", "+5"}, {"SET", "k", "v", "EX", "007"},
		// Option combinations the server rejects over RESP (one decoder, proto/argv).
		{"EXPIRE", "k", "5", "NX", "GT"}, {"SET", "k", "v", "NX", "XX"}, {"FLUSHALL", "LATER"},
		{"CLIENT", "SETINFO", "lib-nom", "x"}, {"CLIENT", "NOPE"},
	} {
		r = command.Request{}
		if err := s.translate(&r, args(bad...)); err == nil {
			t.Errorf("%q translated without error", bad)
		}
	}
}

// TestSBERefusesOpsTheSchemaCannotCarry: a command whose Op is above the
// schema's one-byte range and not one wideOp carries (a RESP-only range)
// gets ErrNoSBEEncoding, not a truncated Op that the server would run as
// another command.
func TestSBERefusesOpsTheSchemaCannotCarry(t *testing.T) {
	s := &sbeCodec{}
	for _, op := range []command.Op{sbe.MaxOp + 1, command.OpSlowLogLen, command.OpSubscribe} {
		r := command.Request{Op: op, Key: []byte("k")}
		if b, err := s.appendTyped(nil, &r); !errors.Is(err, ErrNoSBEEncoding) || len(b) != 0 {
			t.Fatalf("appendTyped(op %d) = %x, %v; want nothing and ErrNoSBEEncoding", r.Op, b, err)
		}
	}
}

// TestSBERefusalBeforeAnyRequest: a server that refuses a connection
// (protected mode's DENIED, too many clients) writes one error reply as
// soon as it accepts, before any request, so it carries correlation id 0.
// The client shows the server's text as the first call's error, as a RESP
// client shows the -DENIED line, instead of a correlation id mismatch.
func TestSBERefusalBeforeAnyRequest(t *testing.T) {
	var c sbe.Codec
	refusal := c.AppendFramedReply(nil, &command.Reply{Status: command.Err, Kind: command.Error,
		Value: []byte(command.DeniedProtectedMode)})
	peer := fakeServer(t, func(conn net.Conn) {
		// As goblin-server does: the refusal, then the connection
		// lingers a moment, reading, before it closes.
		_, _ = conn.Write(refusal)
		_, _ = conn.Read(make([]byte, 512))
		conn.Close()
	})
	cl, err := Dial(context.Background(), "uds://"+peer+"?proto=sbe")
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	err = cl.Ping(context.Background())
	var se *ServerError
	if !errors.As(err, &se) || se.Code != "DENIED" || se.Message != command.DeniedProtectedMode {
		t.Fatalf("PING refused before any request: %v; want a ServerError DENIED with the server's text", err)
	}
}

// TestSBEPongFastPathMatchesGeneral holds parseReply's Pong step (no
// s.rep) to what the general decode makes of the same reply, sent as a
// Reply; a Pong with the wrong correlation id still fails, and the step
// allocates nothing.
func TestSBEPongFastPathMatchesGeneral(t *testing.T) {
	var enc sbe.Codec
	fast, general := &sbeCodec{}, &sbeCodec{}
	var rf, rg result
	for id := uint64(1); id <= 3; id++ {
		fast.sent, general.sent = id, id
		pong := sbe.AppendPong(nil, id)
		reply := enc.AppendReply(nil, &command.Reply{CorrelationID: id, Status: command.OK, Kind: command.Simple, Value: []byte("PONG")})
		nf, err := fast.parseReply(pong, &rf)
		if err != nil || nf != sbe.PingLen {
			t.Fatalf("Pong %d: parseReply = %d, %v", id, nf, err)
		}
		if _, err := general.parseReply(reply, &rg); err != nil {
			t.Fatalf("Reply %d: %v", id, err)
		}
		if rf.kind != rg.kind || string(rf.str) != string(rg.str) || rf.n != rg.n || fast.recv != general.recv {
			t.Fatalf("Pong %d read as %v %q %d (recv %d), the Reply as %v %q %d (recv %d)",
				id, rf.kind, rf.str, rf.n, fast.recv, rg.kind, rg.str, rg.n, general.recv)
		}
	}
	fast.sent++
	if _, err := fast.parseReply(sbe.AppendPong(nil, fast.sent+1), &rf); !errors.Is(err, ErrProtocol) {
		t.Fatalf("Pong with the wrong correlation id: %v, want ErrProtocol", err)
	}
	pong := sbe.AppendPong(nil, 0)
	if a := testing.AllocsPerRun(100, func() {
		fast.sent++
		binary.LittleEndian.PutUint64(pong[8:], fast.sent)
		fast.recv = fast.sent - 1
		if n, err := fast.parseReply(pong, &rf); n != sbe.PingLen || err != nil {
			t.Fatalf("parseReply = %d, %v", n, err)
		}
	}); a != 0 {
		t.Fatalf("a Pong's parseReply allocates %v times", a)
	}
}

// TestPingShortcutMatchesAppendTyped holds Ping's shortcut on a message
// transport (appendPing, no request built) to the bytes and correlation
// ids appendTyped writes for a typed PING.
func TestPingShortcutMatchesAppendTyped(t *testing.T) {
	short, typed := &sbeCodec{}, &sbeCodec{}
	for range 3 {
		a := short.appendPing(nil)
		b, err := typed.appendTyped(nil, &command.Request{Op: command.OpPing})
		if err != nil || !bytes.Equal(a, b) || short.sent != typed.sent {
			t.Fatalf("appendPing wrote % x (sent %d), appendTyped % x, %v (sent %d)", a, short.sent, b, err, typed.sent)
		}
	}
}
