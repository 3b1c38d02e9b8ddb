package ring_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/client"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/server"
)

// TestClientLibrary drives the ring through the Go client library, which
// registers the ring:// scheme, in both protocols.
func TestClientLibrary(t *testing.T) {
	for _, p := range []proto.Protocol{proto.RESP, proto.SBE} {
		t.Run(p.String(), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ring")
			_, loop, err := newServer(dir, p, server.IdleYield)
			if err != nil {
				t.Fatal(err)
			}
			go loop.Run()
			t.Cleanup(func() { loop.Stop(); <-loop.Done() })
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, err := client.Dial(ctx, fmt.Sprintf("ring://%s?proto=%s&wait=park", dir, p))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.Ping(ctx); err != nil {
				t.Fatal(err)
			}
			for i := range 200 {
				key := fmt.Sprintf("k%d", i%7)
				val := bytes.Repeat([]byte{byte('a' + i%26)}, 1+i*13%300)
				if err := c.Set(ctx, key, val, client.SetOptions{}); err != nil {
					t.Fatal(err)
				}
				got, err := c.Get(ctx, key)
				if err != nil || !bytes.Equal(got, val) {
					t.Fatalf("GET %s: %q %v, want %q", key, got, err, val)
				}
			}
			if n, err := c.Incr(ctx, "counter"); err != nil || n != 1 {
				t.Fatalf("INCR: %d %v", n, err)
			}
			// Values larger than a record travel in fragments.
			for _, n := range []int{64 << 10, 1 << 20} {
				val := bytes.Repeat([]byte{'v'}, n)
				if err := c.Set(ctx, "big", val, client.SetOptions{}); err != nil {
					t.Fatalf("SET of %d bytes: %v", n, err)
				}
				if got, err := c.Get(ctx, "big"); err != nil || !bytes.Equal(got, val) {
					t.Fatalf("GET of %d bytes: %d bytes, %v", n, len(got), err)
				}
			}
			if err := c.Ping(ctx); err != nil {
				t.Fatalf("PING after long values: %v", err)
			}
		})
	}
}
