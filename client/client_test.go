package client

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/transport"
)

// exerciseCommands checks every typed call's semantics against a server
// that behaves like Redis (redis-server itself, or goblin-server).
func exerciseCommands(t *testing.T, c *Client) {
	ctx := ctxT(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.FlushAll(ctx))
	must(c.Ping(ctx))
	if _, err := c.Get(ctx, "missing"); !errors.Is(err, ErrNil) {
		t.Fatalf("Get(missing) = %v, want ErrNil", err)
	}
	bin := []byte("a\r\nb\x00c")
	must(c.Set(ctx, "k", bin, SetOptions{}))
	if v, err := c.Get(ctx, "k"); err != nil || !bytes.Equal(v, bin) {
		t.Fatalf("Get(k) = %q, %v", v, err)
	}
	must(c.Set(ctx, "empty", nil, SetOptions{}))
	if v, err := c.Get(ctx, "empty"); err != nil || v == nil || len(v) != 0 {
		t.Fatalf("Get(empty) = %#v, %v; want empty non-nil", v, err)
	}
	dst := []byte("prefix:")
	if v, err := c.GetAppend(ctx, dst, "k"); err != nil || string(v) != "prefix:"+string(bin) {
		t.Fatalf("GetAppend = %q, %v", v, err)
	}
	if err := c.Set(ctx, "k", []byte("x"), SetOptions{NX: true}); !errors.Is(err, ErrNil) {
		t.Fatalf("Set NX on existing key = %v, want ErrNil", err)
	}
	if err := c.Set(ctx, "nokey", []byte("x"), SetOptions{XX: true}); !errors.Is(err, ErrNil) {
		t.Fatalf("Set XX on missing key = %v, want ErrNil", err)
	}
	if old, err := c.SetGet(ctx, nil, "k", []byte("new"), SetOptions{}); err != nil || !bytes.Equal(old, bin) {
		t.Fatalf("SetGet = %q, %v", old, err)
	}
	if _, err := c.SetGet(ctx, nil, "fresh", []byte("v"), SetOptions{}); !errors.Is(err, ErrNil) {
		t.Fatalf("SetGet on a fresh key = %v, want ErrNil", err)
	}
	// TTLs.
	if d, err := c.TTL(ctx, "k"); err != nil || d != NoExpiry {
		t.Fatalf("TTL without expiry = %v, %v", d, err)
	}
	if _, err := c.TTL(ctx, "missing"); !errors.Is(err, ErrNil) {
		t.Fatalf("TTL(missing) = %v, want ErrNil", err)
	}
	must(c.Set(ctx, "t", []byte("v"), SetOptions{TTL: 100 * time.Second}))
	if d, err := c.TTL(ctx, "t"); err != nil || d <= 90*time.Second || d > 100*time.Second {
		t.Fatalf("TTL after EX 100 = %v, %v", d, err)
	}
	must(c.Set(ctx, "t", []byte("v2"), SetOptions{KeepTTL: true}))
	if d, err := c.TTL(ctx, "t"); err != nil || d <= 90*time.Second {
		t.Fatalf("TTL after KEEPTTL = %v, %v", d, err)
	}
	must(c.Set(ctx, "t", []byte("v3"), SetOptions{TTL: 1500 * time.Millisecond}))
	if d, err := c.TTL(ctx, "t"); err != nil || d <= 0 || d > 1500*time.Millisecond {
		t.Fatalf("TTL after PX 1500 = %v, %v", d, err)
	}
	if ok, err := c.Expire(ctx, "k", time.Hour); err != nil || !ok {
		t.Fatalf("Expire(k) = %v, %v", ok, err)
	}
	if ok, err := c.Expire(ctx, "missing", time.Hour); err != nil || ok {
		t.Fatalf("Expire(missing) = %v, %v", ok, err)
	}
	if d, err := c.TTL(ctx, "k"); err != nil || d <= 59*time.Minute {
		t.Fatalf("TTL after Expire = %v, %v", d, err)
	}
	// Counting keys.
	if n, err := c.Exists(ctx, "k", "missing", "k"); err != nil || n != 2 {
		t.Fatalf("Exists = %d, %v; want 2", n, err)
	}
	if n, err := c.Del(ctx, "k", "missing"); err != nil || n != 1 {
		t.Fatalf("Del = %d, %v; want 1", n, err)
	}
	// Counters.
	if n, err := c.Incr(ctx, "n"); err != nil || n != 1 {
		t.Fatalf("Incr = %d, %v", n, err)
	}
	if n, err := c.IncrBy(ctx, "n", 41); err != nil || n != 42 {
		t.Fatalf("IncrBy = %d, %v", n, err)
	}
	if n, err := c.Decr(ctx, "n"); err != nil || n != 41 {
		t.Fatalf("Decr = %d, %v", n, err)
	}
	if n, err := c.DecrBy(ctx, "n", 50); err != nil || n != -9 {
		t.Fatalf("DecrBy = %d, %v", n, err)
	}
	must(c.Set(ctx, "s", []byte("abc"), SetOptions{}))
	_, err := c.Incr(ctx, "s")
	var se *ServerError
	if !errors.As(err, &se) || se.Code != "ERR" {
		t.Fatalf("Incr on a string = %v, want *ServerError ERR", err)
	}
	must(c.Ping(ctx)) // an error reply leaves the connection usable
	// Multi-key calls.
	must(c.MSet(ctx, KV{"m1", []byte("one")}, KV{"m2", []byte("two")}))
	vals, err := c.MGet(ctx, "m1", "nope", "m2")
	if err != nil || len(vals) != 3 || string(vals[0]) != "one" || vals[1] != nil || string(vals[2]) != "two" {
		t.Fatalf("MGet = %q, %v", vals, err)
	}
	if n, err := c.DBSize(ctx); err != nil || n < 5 {
		t.Fatalf("DBSize = %d, %v", n, err)
	}
	// Do and its argument types.
	v, err := c.Do(ctx, "SET", []byte("d"), 12, "EX", int64(100))
	if err != nil || v.Kind != KindStatus || string(v.Str) != "OK" {
		t.Fatalf("Do SET = %+v, %v", v, err)
	}
	if v, err := c.Do(ctx, "GET", "d"); err != nil || v.String() != `"12"` {
		t.Fatalf("Do GET = %v, %v", v, err)
	}
	if v, err := c.Do(ctx, "MGET", "d", "nope"); err != nil || v.String() != "1) \"12\"\n2) (nil)" {
		t.Fatalf("Do MGET = %q, %v", v.String(), err)
	}
	if c.Target().Proto == proto.RESP {
		if v, err := c.Do(ctx, "NOSUCHCOMMAND", 1.5, true); !errors.As(err, &se) || v.Kind != KindError {
			t.Fatalf("Do unknown command = %+v, %v", v, err)
		}
	} else {
		// Commands SBE cannot carry are refused before anything is sent,
		// with an error that says so (not one that reads like the
		// server's), and the connection stays usable.
		for _, cmd := range [][]any{{"NOSUCHCOMMAND"}, {"SLOWLOG", "LEN"}, {"CONFIG", "NOPE"}} {
			if _, err := c.Do(ctx, cmd...); !errors.Is(err, ErrNoSBEEncoding) || errors.As(err, &se) {
				t.Fatalf("Do %v over SBE = %v, want ErrNoSBEEncoding", cmd, err)
			}
		}
		if err := c.Ping(ctx); err != nil {
			t.Fatalf("PING after a refused command: %v", err)
		}
	}
	if _, err := c.Do(ctx, "SET", struct{}{}); err == nil {
		t.Fatal("Do with an unsupported argument type succeeded")
	}
	// A 1 MiB value crosses many reads and the buffer cap.
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16)
	must(c.Set(ctx, "big", big, SetOptions{}))
	if v, err := c.Get(ctx, "big"); err != nil || !bytes.Equal(v, big) {
		t.Fatalf("Get(big): %d bytes, %v", len(v), err)
	}
	// Pipelines: many commands, error replies in the middle, in order.
	p := c.Pipeline()
	for i := 0; i < 3000; i++ {
		p.Do("SET", fmt.Sprintf("p%d", i), i)
	}
	p.Do("INCR", "s")
	for i := 0; i < 3000; i++ {
		p.Do("GET", fmt.Sprintf("p%d", i))
	}
	if p.Len() != 6001 {
		t.Fatalf("Pipeline.Len = %d", p.Len())
	}
	res, err := p.Exec(ctx)
	if err != nil || len(res) != 6001 {
		t.Fatalf("Exec: %d results, %v", len(res), err)
	}
	if res[3000].Kind != KindError {
		t.Fatalf("pipelined INCR on a string = %v, want an error", res[3000])
	}
	for i := 0; i < 3000; i++ {
		if string(res[i].Str) != "OK" || string(res[3001+i].Str) != fmt.Sprint(i) {
			t.Fatalf("pipeline result %d: %v / %v", i, res[i], res[3001+i])
		}
	}
	if res, err := c.Pipeline().Exec(ctx); err != nil || res != nil {
		t.Fatalf("empty Exec = %v, %v", res, err)
	}
}

func TestCommandsAgainstRedis(t *testing.T) {
	sock := startRedis(t)
	t.Run("uds", func(t *testing.T) { exerciseCommands(t, dialT(t, "uds://"+sock)) })
	t.Run("busypoll", func(t *testing.T) {
		exerciseCommands(t, dialWithT(t, Options{BusyPoll: 20 * time.Microsecond}, sock))
	})
}

func TestConcurrentUse(t *testing.T) {
	c := dialT(t, startRedis(t))
	ctx := ctxT(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				key := fmt.Sprintf("g%d-%d", g, i)
				val := []byte(fmt.Sprintf("value-%d-%d", g, i))
				if err := c.Set(ctx, key, val, SetOptions{}); err != nil {
					errs <- err
					return
				}
				got, err := c.Get(ctx, key)
				if err != nil || !bytes.Equal(got, val) {
					errs <- fmt.Errorf("goroutine %d: Get(%s) = %q, %v", g, key, got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestHotPathDoesNotAllocate(t *testing.T) {
	c := dialT(t, startRedis(t))
	ctx := context.Background()
	val := []byte("0123456789abcdef")
	dst := make([]byte, 0, 64)
	if err := c.Set(ctx, "key", val, SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.HSet(ctx, "h", FieldValue{"field", val}); err != nil {
		t.Fatal(err)
	}
	big := make([][]byte, 1000)
	for i := range big {
		big[i] = val
	}
	if _, err := c.LPush(ctx, "l", big...); err != nil { // RPOP never finds it empty
		t.Fatal(err)
	}
	if _, err := c.ZAdd(ctx, "z", Z{Score: 1.5, Member: "m"}); err != nil {
		t.Fatal(err)
	}
	members, err := c.ZRangeAppend(ctx, nil, "z", 0, 9)
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func(){
		"Ping": func() { _ = c.Ping(ctx) },
		"Set":  func() { _ = c.Set(ctx, "key", val, SetOptions{}) },
		"SetEX": func() {
			_ = c.Set(ctx, "key", val, SetOptions{TTL: time.Hour})
		},
		"GetAppend": func() {
			if _, err := c.GetAppend(ctx, dst[:0], "key"); err != nil {
				t.Fatal(err)
			}
		},
		"Incr": func() { _, _ = c.Incr(ctx, "counter") },
		// The collection calls goblin-bench measures (benchmarks/harness).
		"HSet": func() { _, _ = c.HSet(ctx, "h", FieldValue{"field", val}) },
		"HGetAppend": func() {
			if _, err := c.HGetAppend(ctx, dst[:0], "h", "field"); err != nil {
				t.Fatal(err)
			}
		},
		"LPush": func() { _, _ = c.LPush(ctx, "l", val) },
		"RPopAppend": func() {
			if _, err := c.RPopAppend(ctx, dst[:0], "l"); err != nil {
				t.Fatal(err)
			}
		},
		"ZAdd": func() { _, _ = c.ZAdd(ctx, "z", Z{Score: 1.5, Member: "m"}) },
		"ZRangeAppend": func() {
			if members, err = c.ZRangeAppend(ctx, members, "z", 0, 9); err != nil || len(members) != 1 {
				t.Fatal(members, err)
			}
		},
	} {
		if a := testing.AllocsPerRun(200, f); a != 0 {
			t.Errorf("%s allocates %v times per call", name, a)
		}
	}
}

func TestDialNothingThere(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "absent.sock")
	_, err := Dial(ctxT(t), "uds://"+sock)
	var ce *ConnError
	if !errors.As(err, &ce) || ce.Op != "dial" || !errors.Is(err, ErrDial) || !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("Dial(absent) = %v, want *ConnError wrapping ErrDial and ENOENT", err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	if _, err := Dial(ctxT(t), "tcp://"+addr); !errors.Is(err, ErrDial) || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("Dial(closed port) = %v, want ErrDial and ECONNREFUSED", err)
	}
	if _, err := DialTarget(ctxT(t), transport.Target{Scheme: "nosuch", Path: "/x"}); !errors.Is(err, ErrUnknownTransport) {
		t.Fatalf("Dial(unregistered scheme) = %v, want ErrUnknownTransport", err)
	}
	if _, err := Dial(ctxT(t), "bogus://x"); err == nil {
		t.Fatal("Dial(bogus) succeeded")
	}
}

// answerPings reads RESP requests line by line and answers each PING
// with +PONG; anything else (e.g. the SLOW command) goes unanswered.
func answerPings(c net.Conn) {
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		if !bytes.Equal(line, []byte("PING\r\n")) {
			continue
		}
		if _, err := c.Write([]byte("+PONG\r\n")); err != nil {
			return
		}
	}
}

func TestDeadlineThenRecover(t *testing.T) {
	sock := fakeServer(t, answerPings)
	c := dialT(t, sock)
	if err := c.Ping(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err := c.Do(ctx, "SLOW")
	var ce *ConnError
	if !errors.As(err, &ce) || !errors.Is(err, transport.ErrTimeout) {
		t.Fatalf("unanswered request = %v, want *ConnError wrapping transport.ErrTimeout", err)
	}
	// The timed-out connection was dropped; the next call redials and works.
	if err := c.Ping(ctxT(t)); err != nil {
		t.Fatalf("Ping after a timeout: %v", err)
	}
	// A context that is already done does not start a call.
	done, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if err := c.Ping(done); !errors.Is(err, context.Canceled) {
		t.Fatalf("Ping with a cancelled context = %v", err)
	}
}

func TestServerGoneAndProtocolErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		answer string
		want   error
	}{
		"closes":    {"", transport.ErrServerGone},
		"garbage":   {"!garbage\r\n", ErrProtocol},
		"bad int":   {":12x\r\n", ErrProtocol},
		"truncated": {"$10\r\nabc", transport.ErrServerGone},
	} {
		t.Run(name, func(t *testing.T) {
			sock := fakeServer(t, func(c net.Conn) {
				buf := make([]byte, 512)
				if _, err := c.Read(buf); err != nil {
					return
				}
				_, _ = c.Write([]byte(tc.answer))
			})
			c := dialT(t, sock)
			err := c.Ping(ctxT(t))
			var ce *ConnError
			if !errors.As(err, &ce) || !errors.Is(err, tc.want) {
				t.Fatalf("Ping = %v, want *ConnError wrapping %v", err, tc.want)
			}
		})
	}
}

func TestUnexpectedReplyAndClose(t *testing.T) {
	sock := fakeServer(t, func(c net.Conn) {
		r := bufio.NewReader(c)
		for {
			if _, err := r.ReadBytes('\n'); err != nil {
				return
			}
			// Answer every line with a bulk string, which INCR never returns.
			if _, err := c.Write([]byte("$2\r\nhi\r\n")); err != nil {
				return
			}
		}
	})
	c := dialT(t, sock)
	if _, err := c.Incr(ctxT(t), "x"); !errors.Is(err, ErrUnexpectedReply) {
		t.Fatalf("Incr answered by a bulk = %v, want ErrUnexpectedReply", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(ctxT(t)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Ping after Close = %v, want ErrClosed", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
}

func TestPasswordAndRegistry(t *testing.T) {
	sock := startRedis(t)
	// Redis without requirepass rejects AUTH: the dial fails with the
	// server's error, not a connection error.
	_, err := Options{Password: "secret"}.Dial(ctxT(t), sock)
	var se *ServerError
	if !errors.As(err, &se) {
		t.Fatalf("Dial with a password to a server without one = %v, want *ServerError", err)
	}
	// The scheme's dialer is the one used.
	called := false
	swapDialer(t, transport.UDS, func(orig dialer) dialer {
		return dialer{dial: func(ctx context.Context, tg transport.Target, o *Options) (transport.Conn, error) {
			called = true
			return orig.dial(ctx, tg, o)
		}}
	})
	c := dialT(t, sock)
	if err := c.Ping(ctxT(t)); err != nil || !called {
		t.Fatalf("Ping through the uds dialer: %v (called %v)", err, called)
	}
}

// swapDialer makes the client dial scheme s with what wrap returns (given
// the real dialer) until the test ends.
func swapDialer(t *testing.T, s transport.Scheme, wrap func(orig dialer) dialer) {
	t.Helper()
	orig, err := dialerFor(s)
	if err != nil {
		t.Fatal(err)
	}
	d := wrap(orig)
	lookupDialer = func(scheme transport.Scheme) (dialer, error) {
		if scheme == s {
			return d, nil
		}
		return dialerFor(scheme)
	}
	t.Cleanup(func() { lookupDialer = dialerFor })
}

// TestRedialWithPasswordSendsTheCall: when a call finds the connection
// dropped and redials with a password, the AUTH sent on the new connection
// must not replace the call's own command.
func TestRedialWithPasswordSendsTheCall(t *testing.T) {
	var mu sync.Mutex
	var seen []string // first argument of every command, across connections
	sock := fakeServer(t, func(c net.Conn) {
		var buf []byte
		args := make([][]byte, 0, 8)
		rd := make([]byte, 4096)
		for {
			k, err := c.Read(rd)
			if err != nil {
				return
			}
			buf = append(buf, rd[:k]...)
			for {
				var n int
				args, n, err = resp.ReadCommand(buf, args[:0], nil)
				if err != nil || n == 0 {
					break
				}
				name := string(args[0])
				buf = buf[n:]
				mu.Lock()
				seen = append(seen, name)
				mu.Unlock()
				switch name {
				case "AUTH":
					_, _ = c.Write([]byte("+OK\r\n"))
				case "GET":
					_, _ = c.Write([]byte("$5\r\nvalue\r\n"))
				default: // PING: answer, then hang up so the next call redials
					_, _ = c.Write([]byte("+PONG\r\n"))
					return
				}
			}
		}
	})
	c := dialWithT(t, Options{Password: "pw"}, sock)
	if err := c.Ping(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	// The server hung up after PING; this call may see the closed
	// connection (and fail with a ConnError) before the redial.
	var got []byte
	var err error
	for range 2 {
		if got, err = c.Get(ctxT(t), "k"); err == nil {
			break
		}
	}
	if err != nil || string(got) != "value" {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("Get after a redial = %q, %v; server saw %q", got, err, seen)
	}
}

// TestOptionsDefaults: the zero Options are the documented defaults, and
// a negative DialTimeout leaves the dial to the context alone.
func TestOptionsDefaults(t *testing.T) {
	o := Options{}.withDefaults()
	if o.DialTimeout != DefaultDialTimeout || o.MaxBufferKeep != DefaultMaxBufferKeep {
		t.Fatalf("zero Options with defaults = %+v", o)
	}
	if o := (Options{DialTimeout: -1, MaxBufferKeep: 10}).withDefaults(); o.DialTimeout != -1 || o.MaxBufferKeep != 10 {
		t.Fatalf("explicit Options were changed: %+v", o)
	}
	// A negative DialTimeout sets no deadline of its own (one of -1ns
	// would fail every dial): with a context without one, the dial works.
	peer := fakeServer(t, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
	c, err := Options{DialTimeout: -1}.Dial(context.Background(), "uds://"+peer)
	if err != nil {
		t.Fatalf("dial with DialTimeout -1: %v", err)
	}
	c.Close()
}
