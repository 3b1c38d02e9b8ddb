package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit/testcerts"
)

// aeronForwarding starts a goblin primary publishing over MDC on loopback
// (with a status channel, so it takes forwarded writes over Aeron) and a
// replica following it over Aeron with a status channel and
// --replica-forward-writes. primaryArgs and replicaArgs are added to each;
// replicaOf is the primary's address the replica follows over TCP ("":
// its plain TCP port). It returns once the replica follows the Aeron
// stream.
func aeronForwarding(t *testing.T, primaryArgs []string, replicaOf string, replicaArgs []string, primaryPass string) (p *srv, pc *redis.Client, r *srv, rc *redis.Client) {
	t.Helper()
	ctl, status := freeUDPPort(t, "127.0.0.1"), freeUDPPort(t, "127.0.0.1")
	p = startServer(t, append([]string{"--repl-aeron-channel", fmt.Sprintf("aeron:udp?control-mode=dynamic|control=127.0.0.1:%d", ctl),
		"--repl-aeron-status-channel", fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", status)}, primaryArgs...)...)
	po := goblinOpts(p)
	po.Password = primaryPass
	pc = redis.NewClient(po)
	t.Cleanup(func() { pc.Close() })
	if replicaOf == "" {
		replicaOf = p.tcp
	}
	r = startServer(t, append([]string{"--replicaof", strings.Replace(replicaOf, ":", " ", 1),
		"--replica-aeron-channel", fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d|control=127.0.0.1:%d|control-mode=dynamic", freeUDPPort(t, "127.0.0.1"), ctl),
		"--replica-aeron-status-channel", fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", status),
		"--replica-forward-writes"}, replicaArgs...)...)
	rc = redis.NewClient(goblinOpts(r))
	t.Cleanup(func() { rc.Close() })
	aeronLive(t, rc)
	return p, pc, r, rc
}

// TestForwardedWritesSecuredStayOnTCP: a replica whose link to the primary
// uses TLS (tls-replication yes, the primary's TLS port requiring client
// certificates) or a password (masterauth, the primary's requirepass)
// follows the stream over Aeron but forwards its clients' writes over its
// own TLS or authenticated TCP connection, never as Aeron requests (which
// are neither encrypted nor authenticated): the writes are answered and
// read back on the replica, the replica counts none over Aeron, and the
// primary ran none from its Aeron inbox.
func TestForwardedWritesSecuredStayOnTCP(t *testing.T) {
	ctx := context.Background()
	check := func(t *testing.T, p *srv, pc *redis.Client, r *srv, rc *redis.Client) {
		for i := 1; i <= 20; i++ {
			n, err := rc.Incr(ctx, "secured").Result()
			if err != nil || n != int64(i) {
				t.Fatalf("forwarded INCR #%d on the replica: %d %v, want %d", i, n, err, i)
			}
			if v, err := rc.Get(ctx, "secured").Result(); err != nil || v != strconv.Itoa(i) {
				t.Fatalf("GET on the replica right after forwarded INCR #%d: %q %v", i, v, err)
			}
		}
		if v, err := pc.Get(ctx, "secured").Result(); err != nil || v != "20" {
			t.Errorf("the primary's counter after 20 forwarded INCRs: %q %v, want 20", v, err)
		}
		if n := infoInt(t, rc, "replication", "forwarded_answered"); n != 20 {
			t.Errorf("INFO replication forwarded_answered:%d, want 20", n)
		}
		if n := infoInt(t, rc, "replication", "forwarded_aeron"); n != 0 {
			t.Errorf("INFO replication forwarded_aeron:%d, want 0: requests over Aeron are not authenticated", n)
		}
		if got := scrapeOK(p, "goblin_repl_aeron_forwarded_requests_total"); got != 0 {
			t.Errorf("the primary's goblin_repl_aeron_forwarded_requests_total %v, want 0", got)
		}
	}

	t.Run("tls", func(t *testing.T) {
		f, err := testcerts.Write(t.TempDir(), "")
		if err != nil {
			t.Fatal(err)
		}
		tlsPort := freeTCPPort(t)
		p, pc, r, rc := aeronForwarding(t,
			[]string{"--tls-port", strconv.Itoa(tlsPort), "--tls-auth-clients", "yes",
				"--tls-cert-file", f.ServerCert, "--tls-key-file", f.ServerKey, "--tls-ca-cert-file", f.CACert},
			"127.0.0.1:"+strconv.Itoa(tlsPort),
			[]string{"--tls-replication", "yes", "--tls-ca-cert-file", f.CACert,
				"--tls-client-cert-file", f.ClientCert, "--tls-client-key-file", f.ClientKey}, "")
		check(t, p, pc, r, rc)
	})
	t.Run("masterauth", func(t *testing.T) {
		p, pc, r, rc := aeronForwarding(t, []string{"--requirepass", "s3cret"}, "", []string{"--masterauth", "s3cret"}, "s3cret")
		check(t, p, pc, r, rc)
	})
}

// TestForwardedLargeOverAeron: forwarded writes past the size of one Aeron
// frame (32 KiB).
//   - a write whose reply is large (LPOP of 200 × 2 KiB, a ~400 KiB reply:
//     more than the replica's receiver window; SET … GET of a 100 KiB value)
//     goes over Aeron, its answer in parts, and comes back whole, the
//     replica reading its own write after it;
//   - a write whose command is large (SET of a 100 KiB value) goes over
//     TCP, counted as a fallback, and is answered and read back the same;
//   - the replica's Aeron stream stays up throughout (no stall, no resync).
func TestForwardedLargeOverAeron(t *testing.T) {
	ctx := context.Background()
	_, pc, _, rc := aeronForwarding(t, nil, "", nil, "")
	item := func(i int) string { return fmt.Sprintf("%04d:%s", i, strings.Repeat(string(rune('a'+i%26)), 2044)) }
	items := make([]any, 200)
	for i := range items {
		items[i] = item(i)
	}
	if err := pc.RPush(ctx, "list", items...).Err(); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, pc, rc)
	fwd0, tcp0 := infoInt(t, rc, "replication", "forwarded_aeron"), infoInt(t, rc, "replication", "forwarded_tcp_fallbacks")

	got, err := rc.LPopCount(ctx, "list", 200).Result()
	if err != nil || len(got) != 200 {
		t.Fatalf("forwarded LPOP list 200 on the replica: %d items, %v; want 200", len(got), err)
	}
	for i, v := range got {
		if v != item(i) {
			t.Fatalf("forwarded LPOP: item %d is %.10q… (%d bytes), want %.10q… (%d bytes)", i, v, len(v), item(i), len(item(i)))
		}
	}
	if n, err := rc.Exists(ctx, "list").Result(); err != nil || n != 0 {
		t.Errorf("EXISTS list on the replica right after the forwarded LPOP of it all: %d %v, want 0 (read your write)", n, err)
	}

	big := strings.Repeat("0123456789abcdef", 100<<10/16) // 100 KiB: longer than one request
	if err := rc.Set(ctx, "big", big, 0).Err(); err != nil {
		t.Fatalf("forwarded SET of a 100 KiB value: %v", err)
	}
	if v, err := rc.Get(ctx, "big").Result(); err != nil || v != big {
		t.Fatalf("GET big on the replica after its forwarded SET: %d bytes %v, want the 100 KiB value", len(v), err)
	}
	old, err := rc.SetArgs(ctx, "big", "small", redis.SetArgs{Get: true}).Result()
	if err != nil || old != big {
		t.Fatalf("forwarded SET big small GET: %d bytes %v, want the 100 KiB value back", len(old), err)
	}
	if v, err := rc.Get(ctx, "big").Result(); err != nil || v != "small" {
		t.Errorf("GET big on the replica after the forwarded SET … GET: %q %v", v, err)
	}

	if n := infoInt(t, rc, "replication", "forwarded_aeron") - fwd0; n != 2 {
		t.Errorf("forwarded over Aeron: %d of LPOP and SET … GET (large replies), want 2", n)
	}
	if n := infoInt(t, rc, "replication", "forwarded_tcp_fallbacks") - tcp0; n != 1 {
		t.Errorf("TCP fallbacks: %d, want 1 (the SET of 100 KiB, too long for one request)", n)
	}
	if n := infoInt(t, rc, "replication", "forwarded_failed") + infoInt(t, rc, "replication", "forwarded_lagged"); n != 0 {
		t.Errorf("forwarded writes failed or lagged: %d, want 0", n)
	}
	if l := infoField(t, rc, "replication", "aeron_link"); l != "aeron" {
		t.Errorf("aeron_link:%s after the large answers, want aeron (the stream never stalled)", l)
	}
	if n := infoInt(t, rc, "replication", "aeron_fallbacks"); n != 0 {
		t.Errorf("aeron_fallbacks:%d, want 0", n)
	}
}
