package client

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

func TestMain(m *testing.M) { testproc.Main(m) }

// startRedis starts redis-server on a Unix socket in a temp dir and
// returns the socket path, or skips the test when redis-server is not
// installed. The server is stopped in t.Cleanup.
func startRedis(tb testing.TB) string {
	tb.Helper()
	bin := testkit.Need(tb, "redis-server", "the Redis peer")
	dir := tb.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	testproc.Start(tb, bin, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no",
		"--dir", dir, "--logfile", "")
	testproc.WaitDial(tb, "unix", sock, 30*time.Second)
	return sock
}

// fakeServer accepts connections on a temp Unix socket and hands each to
// handle in its own goroutine; it returns the socket path.
func fakeServer(tb testing.TB, handle func(net.Conn)) string {
	tb.Helper()
	sock := filepath.Join(tb.TempDir(), "fake.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		tb.Fatal(err)
	}
	testproc.Serve(tb, ln, handle)
	return sock
}

func dialT(tb testing.TB, tgt string) *Client {
	tb.Helper()
	return dialWithT(tb, Options{}, tgt)
}

// dialWithT is dialT with options.
func dialWithT(tb testing.TB, o Options, tgt string) *Client {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := o.Dial(ctx, tgt)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

func ctxT(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	tb.Cleanup(cancel)
	return ctx
}

func asConnError(err error, ce **ConnError) bool { return errors.As(err, ce) }
