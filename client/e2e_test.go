package client

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// e2eCases are the targets testproc.StartGoblinServer returns: Unix and
// TCP sockets, each in both protocols.
var e2eCases = testproc.GoblinServerKeys

// TestEndToEnd drives the real goblin-server with the library over Unix
// and TCP sockets in both protocols.
func TestEndToEnd(t *testing.T) {
	targets := testproc.StartGoblinServer(t)
	for _, name := range e2eCases {
		t.Run(name, func(t *testing.T) {
			c := dialT(t, targets[name])
			exerciseCommands(t, c)
		})
	}
}

func TestEndToEndConcurrentClients(t *testing.T) {
	targets := testproc.StartGoblinServer(t)
	ctx := ctxT(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for _, name := range e2eCases {
		for g := 0; g < 4; g++ {
			c := dialT(t, targets[name])
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 100; i++ {
					key := fmt.Sprintf("%s-%d-%d", name, g, i)
					if err := c.Set(ctx, key, []byte(key), SetOptions{}); err != nil {
						errs <- err
						return
					}
					if v, err := c.Get(ctx, key); err != nil || string(v) != key {
						errs <- fmt.Errorf("%s: Get(%s) = %q, %v", name, key, v, err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestEndToEndHotPathDoesNotAllocate(t *testing.T) {
	targets := testproc.StartGoblinServer(t)
	for _, name := range []string{"uds/resp", "uds/sbe"} {
		t.Run(name, func(t *testing.T) {
			c := dialT(t, targets[name])
			ctx := context.Background()
			val := []byte("0123456789abcdef")
			dst := make([]byte, 0, 64)
			if err := c.Set(ctx, "key", val, SetOptions{}); err != nil {
				t.Fatal(err)
			}
			for op, f := range map[string]func(){
				"Ping":      func() { _ = c.Ping(ctx) },
				"Set":       func() { _ = c.Set(ctx, "key", val, SetOptions{}) },
				"GetAppend": func() { _, _ = c.GetAppend(ctx, dst[:0], "key") },
			} {
				if a := testing.AllocsPerRun(500, f); a != 0 {
					t.Errorf("%s allocates %v times per call", op, a)
				}
			}
		})
	}
}

func TestEndToEndPassword(t *testing.T) {
	targets := testproc.StartGoblinServer(t, "--requirepass", "s3cret")
	for _, name := range []string{"uds/resp", "tcp/resp"} {
		t.Run(name, func(t *testing.T) {
			c := dialWithT(t, Options{Password: "s3cret"}, targets[name])
			if err := c.Ping(ctxT(t)); err != nil {
				t.Fatal(err)
			}
			if _, err := (Options{Password: "wrong"}).Dial(ctxT(t), targets[name]); err == nil {
				t.Fatal("Dial with a wrong password succeeded")
			}
		})
	}
}

func TestEndToEndServerRestart(t *testing.T) {
	bin := testproc.Build(t, "./cmd/goblin-server")
	sock := filepath.Join(t.TempDir(), "g.sock")
	start := func() *testproc.Proc {
		p := testproc.Start(t, bin, "--metrics", "off", "--listen", "uds://"+sock)
		p.WaitLog(t, `msg=ready`, 60*time.Second)
		return p
	}
	p := start()
	c := dialT(t, sock)
	if err := c.Ping(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	p.Stop(10 * time.Second)
	err := c.Ping(ctxT(t))
	if err == nil {
		t.Fatal("Ping to a stopped server succeeded")
	}
	var ce *ConnError
	if !asConnError(err, &ce) {
		t.Fatalf("Ping to a stopped server = %v, want *ConnError", err)
	}
	start()
	if err := c.Ping(ctxT(t)); err != nil {
		t.Fatalf("Ping after the server restarted: %v (the client should redial)", err)
	}
}

// TestEndToEndSameSyntaxBothProtocols checks that a command means the same
// over RESP and SBE, since both go through engine/parse: PING with a
// message echoes it (the SBE translation once put the message where the
// server does not look), and EXPIRE options reach the server.
func TestEndToEndSameSyntaxBothProtocols(t *testing.T) {
	targets := testproc.StartGoblinServer(t)
	ctx := ctxT(t)
	for _, name := range e2eCases {
		t.Run(name, func(t *testing.T) {
			c := dialT(t, targets[name])
			v, err := c.Do(ctx, "PING", "hello")
			if err != nil || v.Kind != KindBulk || string(v.Str) != "hello" {
				t.Fatalf("PING hello = %v, %v; want bulk \"hello\"", v, err)
			}
			v, err = c.Do(ctx, "EXPIRE", "k", "5", "XX", "GT")
			if err != nil || v.Kind != KindInt || v.Int != 0 {
				t.Fatalf("EXPIRE k 5 XX GT on a missing key = %v, %v; want 0", v, err)
			}
		})
	}
}
