package main

import (
	"context"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// clientFields returns the CLIENT LIST line whose laddr-side address is
// addr (the client's own local address), as a field map.
func clientFields(list, addr string) map[string]string {
	for _, l := range strings.Split(list, "\n") {
		if !strings.Contains(l, " addr="+addr+" ") {
			continue
		}
		m := map[string]string{}
		for _, f := range strings.Fields(l) {
			k, v, _ := strings.Cut(f, "=")
			m[k] = v
		}
		return m
	}
	return nil
}

// TestClientListBuffers: CLIENT LIST's buffer fields carry the socket
// transport's real figures, as Redis 7.0's do: a client with half a
// request sent shows it in qbuf; a client that asked for more replies than
// its socket takes and does not read shows them queued (oll, omem, tot-mem)
// and events=rw; the caller's own line shows its command's words in
// argv-mem and its request in qbuf.
func TestClientListBuffers(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "g.sock")
	p := startProc(t, buildServer(t), "--metrics", "off", "--dir", dir, "--protected-mode", "no",
		"--listen", "uds://"+sock, "--listen", "tcp://127.0.0.1:0")
	addr := p.WaitLog(t, `msg=listening target="?tcp://(127\.0\.0\.1:\d+)`, startTimeout)
	p.WaitLog(t, `msg=ready`, startTimeout)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: 1})
	defer rdb.Close()
	if err := rdb.Set(ctx, "big", strings.Repeat("v", 1<<20), 0).Err(); err != nil {
		t.Fatal(err)
	}

	partial, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer partial.Close()
	half := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$10\r\nabc"
	partial.Write([]byte(half))

	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	slow.(*net.TCPConn).SetReadBuffer(4096)
	slow.Write([]byte(strings.Repeat("GET big\r\n", 16))) // 16 MiB of replies, never read

	var a, b map[string]string
	testkit.Eventually(t, 10*time.Second, "CLIENT LIST to show the partial request and the queued replies", func() (bool, string) {
		list := rdb.ClientList(ctx).Val()
		a, b = clientFields(list, partial.LocalAddr().String()), clientFields(list, slow.LocalAddr().String())
		if a == nil || b == nil {
			return false, list
		}
		return a["qbuf"] == strconv.Itoa(len(half)) && b["oll"] != "0" && b["events"] == "rw", list
	})
	if n, _ := strconv.Atoi(a["qbuf-free"]); n <= 0 {
		t.Errorf("partial client: qbuf-free=%s, want the room left in its own buffer", a["qbuf-free"])
	}
	if n, _ := strconv.Atoi(a["tot-mem"]); n < len(half) {
		t.Errorf("partial client: tot-mem=%s, want at least its buffer", a["tot-mem"])
	}
	omem, _ := strconv.Atoi(b["omem"])
	tot, _ := strconv.Atoi(b["tot-mem"])
	rbp, _ := strconv.Atoi(b["rbp"])
	if omem < 1<<20 || tot < omem || rbp < 1<<20 {
		t.Errorf("slow client: omem=%d tot-mem=%d rbp=%d; want at least a reply's MiB queued, counted in tot-mem, and the batch's peak", omem, tot, rbp)
	}
	info := rdb.Do(ctx, "CLIENT", "INFO").Val().(string)
	for _, want := range []string{" qbuf=26 ", " argv-mem=10 ", " events=r "} {
		if !strings.Contains(info, want) {
			t.Errorf("CLIENT INFO %q lacks %q (redis-server 7.0 shows it for the same request)", info, want)
		}
	}
}
