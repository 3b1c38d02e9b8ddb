package uds

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit/testproc"
	"github.com/goblin-kv/goblin/transport"
)

// connEchoPeer listens on network and echoes every byte back, or runs handle
// on each accepted connection when it is not nil.
func connEchoPeer(t *testing.T, network string, handle func(net.Conn)) (addr string) {
	t.Helper()
	addr = "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(t.TempDir(), "peer.sock")
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	if handle == nil {
		handle = func(c net.Conn) { _, _ = io.Copy(c, c) }
	}
	testproc.Serve(t, ln, handle)
	return ln.Addr().String()
}

func connDialT(t *testing.T, network, addr string, o DialOptions) *Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, network, addr, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// connReadFull reads until dst holds want bytes.
func connReadFull(t *testing.T, c *Conn, dst []byte, want int) []byte {
	t.Helper()
	for len(dst) < want {
		var err error
		dst, err = c.ReadAppend(dst)
		if err != nil {
			t.Fatalf("ReadAppend after %d of %d bytes: %v", len(dst), want, err)
		}
	}
	return dst
}

var connModes = []struct {
	name string
	o    DialOptions
}{
	{"poller", DialOptions{}},
	{"busypoll", DialOptions{BusyPoll: 50 * time.Microsecond, ReadChunk: 64}},
}

func TestConnRoundTrip(t *testing.T) {
	for _, network := range []string{"unix", "tcp"} {
		for _, m := range connModes {
			t.Run(network+"/"+m.name, func(t *testing.T) {
				c := connDialT(t, network, connEchoPeer(t, network, nil), m.o)
				if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
					t.Fatal(err)
				}
				msg := []byte("*1\r\n$4\r\nPING\r\n")
				if err := c.Write(msg); err != nil {
					t.Fatal(err)
				}
				got := connReadFull(t, c, nil, len(msg))
				if !bytes.Equal(got, msg) {
					t.Fatalf("echo = %q, want %q", got, msg)
				}
				// A large message crosses many reads and grows the buffer.
				big := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
				go func() { _ = c.Write(big) }()
				got = connReadFull(t, c, got[:0], len(big))
				if !bytes.Equal(got, big) {
					t.Fatal("1 MiB echo differs")
				}
			})
		}
	}
}

func TestConnDialTarget(t *testing.T) {
	addr := connEchoPeer(t, "unix", nil)
	tg, err := transport.ParseTarget("uds://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	c, err := DialTarget(context.Background(), tg, DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if _, err := DialTarget(context.Background(), transport.Target{Scheme: transport.Ring, Path: "/x"}, DialOptions{}); err == nil {
		t.Fatal("DialTarget(ring) succeeded")
	}
	if _, err := Dial(context.Background(), "udp", "127.0.0.1:1", DialOptions{}); err == nil {
		t.Fatal("Dial(udp) succeeded")
	}
}

// TestDialTargetRefusesUnknownParams: a client target parameter the
// transport does not know is refused (transport.ErrTargetParam, naming the known
// ones) before anything is dialled, rather than silently ignored; a uds
// listener's mode= is accepted so that one target string serves both.
func TestDialTargetRefusesUnknownParams(t *testing.T) {
	ctx := context.Background()
	for _, s := range []string{"tcp://127.0.0.1:1?nosuch=1", "uds:///nonexistent.sock?nosuch=1", "tcp://127.0.0.1:1?mode=600"} {
		tg, err := transport.ParseTarget(s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DialTarget(ctx, tg, DialOptions{}); !errors.Is(err, transport.ErrTargetParam) || !strings.Contains(err.Error(), "proto=resp|sbe") {
			t.Errorf("DialTarget(%s) = %v, want transport.ErrTargetParam naming the known parameters", s, err)
		}
	}
	tg, _ := transport.ParseTarget("uds:///nonexistent.sock?mode=600")
	if _, err := DialTarget(ctx, tg, DialOptions{}); errors.Is(err, transport.ErrTargetParam) {
		t.Errorf("DialTarget with a listener's mode= refused it: %v", err)
	}
}

func TestConnTimeout(t *testing.T) {
	for _, m := range connModes {
		t.Run(m.name, func(t *testing.T) {
			// The peer reads and never answers.
			addr := connEchoPeer(t, "unix", func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
			c := connDialT(t, "unix", addr, m.o)
			if err := c.Write([]byte("hello")); err != nil {
				t.Fatal(err)
			}
			if err := c.SetDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
				t.Fatal(err)
			}
			_, err := c.ReadAppend(nil)
			if !errors.Is(err, transport.ErrTimeout) {
				t.Fatalf("ReadAppend past the deadline: %v, want ErrTimeout", err)
			}
			// Clearing the deadline makes the conn usable again.
			if err := c.SetDeadline(time.Time{}); err != nil {
				t.Fatal(err)
			}
			if err := c.Write([]byte("more")); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestConnServerGone(t *testing.T) {
	for _, m := range connModes {
		t.Run(m.name, func(t *testing.T) {
			addr := connEchoPeer(t, "unix", func(c net.Conn) {}) // closes at once
			c := connDialT(t, "unix", addr, m.o)
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			_, err := c.ReadAppend(nil)
			if !errors.Is(err, transport.ErrServerGone) {
				t.Fatalf("read from closed peer: %v, want ErrServerGone", err)
			}
			// Writing to a peer that has gone eventually fails with EPIPE
			// or ECONNRESET, both reported as ErrServerGone.
			var werr error
			for i := 0; i < 100 && werr == nil; i++ {
				werr = c.Write(make([]byte, 64<<10))
			}
			if !errors.Is(werr, transport.ErrServerGone) {
				t.Fatalf("write to closed peer: %v, want ErrServerGone", werr)
			}
		})
	}
}

func TestConnUseAfterClose(t *testing.T) {
	c := connDialT(t, "unix", connEchoPeer(t, "unix", nil), DialOptions{})
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Write([]byte("x")); !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("Write after Close: %v, want ErrClosed", err)
	}
	if _, err := c.ReadAppend(nil); !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("ReadAppend after Close: %v, want ErrClosed", err)
	}
}

func TestConnDialFailures(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nobody.sock")
	_, err := Dial(context.Background(), "unix", missing, DialOptions{})
	if !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("dial missing socket: %v, want ENOENT", err)
	}
	// A port nobody listens on: take one and release it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = Dial(context.Background(), "tcp", addr, DialOptions{})
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial closed port: %v, want ECONNREFUSED", err)
	}
}

func TestConnRoundTripDoesNotAllocate(t *testing.T) {
	for _, m := range connModes {
		t.Run(m.name, func(t *testing.T) {
			c := connDialT(t, "unix", connEchoPeer(t, "unix", nil), m.o)
			msg := []byte("*1\r\n$4\r\nPING\r\n")
			buf := make([]byte, 0, 8192)
			allocs := testing.AllocsPerRun(200, func() {
				if err := c.Write(msg); err != nil {
					t.Fatal(err)
				}
				b := buf[:0]
				for len(b) < len(msg) {
					var err error
					if b, err = c.ReadAppend(b); err != nil {
						t.Fatal(err)
					}
				}
			})
			if allocs != 0 {
				t.Fatalf("Write+ReadAppend allocates %v times per round trip", allocs)
			}
		})
	}
}
