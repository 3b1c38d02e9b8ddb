package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// TestForwardedWrites: an Aeron replica (MDC on loopback) started with
// --replica-forward-writes, and one without, of one goblin primary.
//   - the plain replica still answers READONLY;
//   - on the forwarding replica a client's INCR is answered with the
//     primary's reply and the very next GET on the same connection
//     returns it (read-your-writes), 300 times over, RESP2 and RESP3;
//   - pipelined INCRs come back in order, each a step on;
//   - concurrent clients' writes all land once (the counter's total);
//   - the primary's errors (WRONGTYPE) and nil replies (SET NX) come back
//     as the primary sent them, in the client's protocol;
//   - the client's database is the one written on the primary;
//   - a write inside MULTI is refused (READONLY), as before;
//   - with the primary gone a write is answered with an error that says
//     forwarding failed, not left hanging.
//
// aeron: the replica has a status channel, so its writes go over Aeron
// (requests on the status channel, answers on the stream); tcp: it has
// none, so they go over its TCP connection to the primary.
func TestForwardedWrites(t *testing.T) {
	t.Parallel() // its own processes and ports; its one time bound (12 s for an error answer) is far above a loaded run
	t.Run("aeron", func(t *testing.T) { testForwardedWrites(t, true) })
	t.Run("tcp", func(t *testing.T) { testForwardedWrites(t, false) })
}

func testForwardedWrites(t *testing.T, overAeron bool) {
	ctx := context.Background()
	ctl, status := freeUDPPort(t, "127.0.0.1"), freeUDPPort(t, "127.0.0.1")
	p := startServer(t, "--repl-aeron-channel", fmt.Sprintf("aeron:udp?control-mode=dynamic|control=127.0.0.1:%d", ctl),
		"--repl-aeron-status-channel", fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", status))
	pc := redis.NewClient(goblinOpts(p))
	defer pc.Close()
	replica := func(extra ...string) (*srv, *redis.Client) {
		args := []string{"--replicaof", strings.Replace(p.tcp, ":", " ", 1),
			"--replica-aeron-channel", fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d|control=127.0.0.1:%d|control-mode=dynamic", freeUDPPort(t, "127.0.0.1"), ctl)}
		if overAeron {
			args = append(args, "--replica-aeron-status-channel", fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", status))
		}
		r := startServer(t, append(args, extra...)...)
		rc := redis.NewClient(goblinOpts(r))
		t.Cleanup(func() { rc.Close() })
		aeronLive(t, rc)
		return r, rc
	}
	_, plain := replica()
	fr, fc := replica("--replica-forward-writes")

	if err := plain.Set(ctx, "k", "v", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "READONLY") {
		t.Fatalf("SET on a replica without --replica-forward-writes: %v, want READONLY", err)
	}

	for _, protocol := range []int{2, 3} {
		c := redis.NewClient(&redis.Options{Network: "unix", Addr: fr.sock, PoolSize: 1, Protocol: protocol})
		key := fmt.Sprintf("ryw%d", protocol)
		for i := 1; i <= 300; i++ {
			n, err := c.Incr(ctx, key).Result()
			if err != nil || n != int64(i) {
				t.Fatalf("RESP%d: forwarded INCR %s #%d: %d %v, want %d", protocol, key, i, n, err, i)
			}
			if v, err := c.Get(ctx, key).Result(); err != nil || v != strconv.Itoa(i) {
				t.Fatalf("RESP%d: GET %s on the replica right after the forwarded INCR #%d: %q %v: the client did not read its own write", protocol, key, i, v, err)
			}
		}
		// A nil reply and an error come back as the primary gave them.
		if ok, err := c.SetNX(ctx, key, "x", 0).Result(); err != nil || ok {
			t.Errorf("RESP%d: forwarded SET NX on an existing key: %v %v, want false (a nil reply)", protocol, ok, err)
		}
		if err := c.LPush(ctx, key, "x").Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
			t.Errorf("RESP%d: forwarded LPUSH on a string: %v, want WRONGTYPE", protocol, err)
		}
		c.Close()
	}

	// Pipelined: each answer a step on, in order.
	pl := fc.Pipeline()
	var cmds []*redis.IntCmd
	for range 50 {
		cmds = append(cmds, pl.Incr(ctx, "piped"))
	}
	if _, err := pl.Exec(ctx); err != nil {
		t.Fatalf("pipelined forwarded INCRs: %v", err)
	}
	for i, c := range cmds {
		if c.Val() != int64(i+1) {
			t.Fatalf("pipelined forwarded INCR #%d answered %d, want %d", i+1, c.Val(), i+1)
		}
	}

	// Concurrent clients: every write lands once.
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := redis.NewClient(&redis.Options{Network: "unix", Addr: fr.sock, PoolSize: 1})
			defer c.Close()
			for range 100 {
				if err := c.Incr(ctx, "shared").Err(); err != nil {
					t.Errorf("client %d: forwarded INCR shared: %v", g, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n, err := pc.Get(ctx, "shared").Int(); err != nil || n != 400 {
		t.Errorf("the primary's shared counter after 4 × 100 forwarded INCRs: %d %v, want 400", n, err)
	}
	if n, err := fc.Get(ctx, "shared").Int(); err != nil || n != 400 {
		t.Errorf("the replica's shared counter after 4 × 100 forwarded INCRs: %d %v, want 400", n, err)
	}

	// The client's database.
	c5 := redis.NewClient(&redis.Options{Network: "unix", Addr: fr.sock, PoolSize: 1, DB: 5})
	if err := c5.Set(ctx, "indb5", "yes", 0).Err(); err != nil {
		t.Fatalf("forwarded SET in db 5: %v", err)
	}
	if v, err := c5.Get(ctx, "indb5").Result(); err != nil || v != "yes" {
		t.Errorf("GET indb5 in db 5 on the replica: %q %v", v, err)
	}
	p5 := redis.NewClient(&redis.Options{Network: "unix", Addr: p.sock, PoolSize: 1, DB: 5})
	if v, err := p5.Get(ctx, "indb5").Result(); err != nil || v != "yes" {
		t.Errorf("GET indb5 in db 5 on the primary: %q %v", v, err)
	}
	if n, _ := pc.Exists(ctx, "indb5").Result(); n != 0 {
		t.Errorf("the forwarded SET in db 5 landed in db 0 on the primary")
	}
	p5.Close()
	c5.Close()

	// Inside MULTI: READONLY, as before (one connection: PoolSize 1).
	conn := fc.Conn()
	if err := conn.Do(ctx, "MULTI").Err(); err != nil {
		t.Fatal(err)
	}
	if err := conn.Do(ctx, "SET", "intx", "v").Err(); err == nil || !strings.Contains(err.Error(), "READONLY You can't write") {
		t.Errorf("SET inside MULTI on the forwarding replica: %v, want READONLY", err)
	}
	conn.Close()
	if n, _ := pc.Exists(ctx, "intx").Result(); n != 0 {
		t.Errorf("SET inside MULTI on the forwarding replica reached the primary")
	}

	// CLIENT UNBLOCK leaves a forwarded write alone (its answer is the
	// primary's): with the primary's writes paused, a client parked on a
	// forwarded SET is not released, then gets exactly its one answer.
	if err := pc.Do(ctx, "CLIENT", "PAUSE", "3000", "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	pcl := redis.NewClient(&redis.Options{Network: "unix", Addr: fr.sock, PoolSize: 1})
	defer pcl.Close()
	parkedID, err := pcl.ClientID(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	parked := make(chan error, 1)
	go func() { parked <- pcl.Set(ctx, "unblockme", "v", 0).Err() }()
	time.Sleep(500 * time.Millisecond)
	if n, err := fc.ClientUnblock(ctx, parkedID).Result(); err != nil || n != 0 {
		t.Errorf("CLIENT UNBLOCK of a client parked on a forwarded write: %d %v, want 0 (left alone)", n, err)
	}
	if err := fc.ClientUnblockWithError(ctx, parkedID).Err(); err != nil {
		t.Errorf("CLIENT UNBLOCK ERROR: %v", err)
	}
	if err := <-parked; err != nil {
		t.Errorf("the forwarded SET while the primary paused writes: %v, want OK", err)
	}
	if v, err := pcl.Get(ctx, "unblockme").Result(); err != nil || v != "v" {
		t.Errorf("GET after the paused forwarded SET: %q %v (an extra answer would show here)", v, err)
	}

	if n := infoInt(t, fc, "replication", "forwarded_answered"); n < 1000 {
		t.Errorf("INFO replication forwarded_answered:%d, want at least the 1,056 writes forwarded so far", n)
	}
	if n := infoInt(t, fc, "replication", "forwarded_failed") + infoInt(t, fc, "replication", "forwarded_lagged"); n != 0 {
		t.Errorf("INFO replication: %d forwarded writes failed or lagged, want none", n)
	}
	viaAeron, writes := infoInt(t, fc, "replication", "forwarded_aeron"), infoInt(t, fc, "replication", "forwarded_writes")
	if overAeron && viaAeron < writes*9/10 {
		t.Errorf("INFO replication: forwarded_aeron:%d of forwarded_writes:%d, want (nearly) all over Aeron", viaAeron, writes)
	}
	if !overAeron && viaAeron != 0 {
		t.Errorf("INFO replication: forwarded_aeron:%d on a replica without a status channel, want 0", viaAeron)
	}
	testkit.Eventually(t, 10*time.Second, "the metrics to count the forwarded writes as INFO does", func() (bool, string) {
		got := fmt.Sprintf("replica: writes %v aeron %v answered %v; primary: ran over Aeron %v",
			scrapeOK(fr, "goblin_replica_forwarded_writes_total"), scrapeOK(fr, "goblin_replica_forwarded_aeron_total"),
			scrapeOK(fr, "goblin_replica_forwarded_answered_total"), scrapeOK(p, "goblin_repl_aeron_forwarded_ran_total"))
		ok := scrapeOK(fr, "goblin_replica_forwarded_writes_total") == float64(writes) &&
			scrapeOK(fr, "goblin_replica_forwarded_aeron_total") == float64(viaAeron)
		if overAeron {
			ok = ok && scrapeOK(p, "goblin_repl_aeron_forwarded_ran_total") >= float64(viaAeron)
		}
		return ok, got
	})

	// The primary gone: an answer, not a hang.
	p.p.Stop(10 * time.Second)
	start := time.Now()
	err = fc.Set(ctx, "after", "v", 0).Err()
	var rerr redis.Error
	if err == nil || !errors.As(err, &rerr) || !strings.Contains(err.Error(), "forwarded write") {
		t.Errorf("forwarded SET with the primary gone: %v, want an error saying the forwarding failed", err)
	}
	if d := time.Since(start); d > 12*time.Second {
		t.Errorf("forwarded SET with the primary gone took %v to be answered", d)
	}
	if n := infoInt(t, fc, "replication", "forwarded_failed"); n != 1 {
		t.Errorf("INFO replication forwarded_failed:%d after the primary went, want 1", n)
	}
}
