package client

// Blocking pops on every transport: a BLPOP that finds no data waits, on
// the ring and Aeron as on a socket, for another client's push or its
// timeout, without blocking the server's loop; blocked clients are served
// first blocked, first served, whatever transport each came on.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// startBlockingTransports runs one goblin-server serving the Unix socket
// and TCP (from StartGoblinServer), the ring and Aeron IPC (goblin's Go
// driver, in-process), each of the last two in both protocols, and returns
// its targets keyed "uds/resp", "uds/sbe", "ring/resp", "ring/sbe",
// "aeron-ipc/resp", "aeron-ipc/sbe".
func startBlockingTransports(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	respRing, sbeRing := filepath.Join(dir, "ring-resp"), filepath.Join(dir, "ring-sbe")
	aeronDir := filepath.Join(shmDir(t), "aeron")
	ipcResp := "aeron:ipc?proto=resp|dir=" + aeronDir
	ipcSBE := "aeron:ipc?proto=sbe|stream=2001|reply-stream=2002|dir=" + aeronDir
	targets := testproc.StartGoblinServer(t,
		"--listen", "ring://"+respRing+"?proto=resp",
		"--listen", "ring://"+sbeRing+"?proto=sbe",
		"--listen", ipcResp,
		"--listen", ipcSBE+"|driver=external")
	targets["ring/resp"] = "ring://" + respRing + "?proto=resp&wait=yield"
	targets["ring/sbe"] = "ring://" + sbeRing + "?proto=sbe&wait=yield"
	targets["aeron-ipc/resp"] = ipcResp
	targets["aeron-ipc/sbe"] = ipcSBE
	return targets
}

// shmDir is a temporary directory under /dev/shm (when there is one),
// removed at the end of the test.
func shmDir(t *testing.T) string {
	t.Helper()
	root, err := os.MkdirTemp(shmBase(), "goblin-block-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	return root
}

// popResult is what a BLPop in a goroutine returned.
type popResult struct {
	key string
	val []byte
	err error
}

// blpopAsync runs BLPop on c in a goroutine and returns where its result
// arrives.
func blpopAsync(ctx context.Context, c *Client, timeout time.Duration, keys ...string) <-chan popResult {
	ch := make(chan popResult, 1)
	go func() {
		k, v, err := c.BLPop(ctx, timeout, keys...)
		ch <- popResult{k, v, err}
	}()
	return ch
}

// waitBlocked polls INFO clients on ctl until blocked_clients is n.
func waitBlocked(t *testing.T, ctx context.Context, ctl *Client, n int) {
	t.Helper()
	want := "blocked_clients:" + strconv.Itoa(n)
	var last string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		v, err := ctl.Do(ctx, "INFO", "clients")
		if err != nil {
			t.Fatalf("INFO clients: %v", err)
		}
		last = string(v.Str)
		if strings.Contains(last, want+"\r\n") {
			return
		}
	}
	t.Fatalf("%s never showed in INFO clients; last:\n%s", want, last)
}

// awaitPop waits for a BLPop's result (naming who, when it never comes).
func awaitPop(t *testing.T, ch <-chan popResult, who string) popResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: BLPOP never returned", who)
	}
	return popResult{}
}

// TestBlockingOverMessageTransport: over the ring and Aeron IPC, in RESP
// and SBE, a BLPOP on an empty list waits until another client pushes,
// and then returns that element; one that times out returns nil
// (ErrNil), after its timeout and not before.
func TestBlockingOverMessageTransport(t *testing.T) {
	targets := startBlockingTransports(t)
	for _, name := range []string{"ring/resp", "ring/sbe", "aeron-ipc/resp", "aeron-ipc/sbe"} {
		t.Run(name, func(t *testing.T) { blockingOn(t, targets["uds/resp"], targets[name]) })
	}
}

// TestBlockingSBEOverSocket: over SBE on the Unix socket a BLPOP waits
// for a push too (its answer, framed, carries the request's correlation
// id, or the client would refuse it).
func TestBlockingSBEOverSocket(t *testing.T) {
	targets := startBlockingTransports(t)
	blockingOn(t, targets["uds/resp"], targets["uds/sbe"])
}

func blockingOn(t *testing.T, ctlTarget, tgt string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ctl := dialT(t, ctlTarget)
	waiter := dialT(t, tgt)
	key := "block:" + strings.ReplaceAll(tgt, "/", "_")
	if _, err := ctl.Do(ctx, "DEL", key); err != nil {
		t.Fatal(err)
	}
	got := blpopAsync(ctx, waiter, 0, key)
	waitBlocked(t, ctx, ctl, 1)
	select {
	case r := <-got:
		t.Fatalf("BLPOP returned before anything was pushed: %q %q %v", r.key, r.val, r.err)
	default:
	}
	if _, err := ctl.LPush(ctx, key, []byte("job-1")); err != nil {
		t.Fatal(err)
	}
	r := awaitPop(t, got, "after LPUSH")
	if r.err != nil || r.key != key || string(r.val) != "job-1" {
		t.Fatalf("BLPOP after LPUSH: %q %q %v, want %q job-1", r.key, r.val, r.err, key)
	}
	// The connection goes on: a request after the later answer is answered.
	if v, err := waiter.Do(ctx, "PING"); err != nil || v.String() != "PONG" {
		t.Fatalf("PING after a blocked BLPOP: %v %v", v, err)
	}
	start := time.Now()
	r = awaitPop(t, blpopAsync(ctx, waiter, 200*time.Millisecond, key), "timeout")
	if !errors.Is(r.err, ErrNil) {
		t.Fatalf("BLPOP timing out: %q %q %v, want ErrNil", r.key, r.val, r.err)
	}
	// Not before its timeout, give or take the server's coarse
	// millisecond clock (read once per loop tick).
	if took := time.Since(start); took < 190*time.Millisecond {
		t.Fatalf("BLPOP with a 200 ms timeout answered after %v", took)
	}
	waitBlocked(t, ctx, ctl, 0)
}

// TestBlockedClientWaitsItsTurn: clients blocked on one key over different
// transports are served in the order they blocked, one element each, as
// Redis serves them.
func TestBlockedClientWaitsItsTurn(t *testing.T) {
	targets := startBlockingTransports(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ctl := dialT(t, targets["uds/resp"])
	order := []string{"aeron-ipc/sbe", "ring/resp", "uds/resp", "ring/sbe", "aeron-ipc/resp"}
	var waits []<-chan popResult
	for i, name := range order {
		waits = append(waits, blpopAsync(ctx, dialT(t, targets[name]), 0, "turn"))
		waitBlocked(t, ctx, ctl, i+1)
	}
	for i, name := range order {
		if _, err := ctl.RPush(ctx, "turn", []byte(name)); err != nil {
			t.Fatal(err)
		}
		r := awaitPop(t, waits[i], name)
		if r.err != nil || string(r.val) != name {
			t.Fatalf("blocked %d (%s) got %q %v, want the %d-th push %q", i+1, name, r.val, r.err, i+1, name)
		}
	}
}

// TestBlockedPipelineWaits: requests pipelined behind a BLPOP that blocks
// wait their turn on every message transport (in the ring, or held in
// order on Aeron) and are answered after it, in order, once a push
// serves it.
func TestBlockedPipelineWaits(t *testing.T) {
	targets := startBlockingTransports(t)
	for _, name := range []string{"ring/resp", "ring/sbe", "aeron-ipc/resp", "aeron-ipc/sbe", "uds/resp"} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			ctl := dialT(t, targets["uds/resp"])
			c := dialT(t, targets[name])
			key := "pipe-block:" + name
			done := make(chan []Value, 1)
			errc := make(chan error, 1)
			go func() {
				res, err := c.Pipeline().Do("BLPOP", key, "0").Do("LLEN", key).Do("PING").Exec(ctx)
				if err != nil {
					errc <- err
					return
				}
				done <- res
			}()
			waitBlocked(t, ctx, ctl, 1)
			if _, err := ctl.RPush(ctx, key, []byte("a"), []byte("b")); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-errc:
				t.Fatalf("pipeline: %v", err)
			case res := <-done:
				got := make([]string, len(res))
				for i, v := range res {
					got[i] = strings.ReplaceAll(v.String(), "\n", " ")
				}
				want := []string{`1) "` + key + `" 2) "a"`, "(integer) 1", "PONG"}
				if strings.Join(got, "|") != strings.Join(want, "|") {
					t.Fatalf("pipeline behind a blocked BLPOP answered %q, want %q", got, want)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the pipeline behind a blocked BLPOP never completed after the push")
			}
		})
	}
}
