package main

// Pub/Sub against real processes: the bytes every connection receives
// from goblin-server and from redis-server 7.0 for one script of
// SUBSCRIBE/PUBLISH traffic over real sockets (RESP2 and RESP3),
// redis-cli SUBSCRIBE, go-redis v9's PubSub, and a subscriber that never
// reads being cut at the pubsub output limit while the others go on.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/client"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/transport"
)

// wireStep is one command a connection of a pubsub script sends.
type wireStep struct {
	conn int
	cmd  []string
	then [][]string // more commands in the same write (a transaction, answered as one)
	skip bool       // the answer differs by design (HELLO names the server): not compared
}

// pubsubScript: connections 0 and 2 speak RESP2, 1 and 3 switch to RESP3.
var pubsubScript = []wireStep{
	{conn: 1, cmd: []string{"HELLO", "3"}, skip: true},
	{conn: 3, cmd: []string{"HELLO", "3"}, skip: true},
	{conn: 0, cmd: []string{"SUBSCRIBE", "a", "b"}},
	{conn: 0, cmd: []string{"SUBSCRIBE", "a"}},
	{conn: 0, cmd: []string{"PSUBSCRIBE", "n.*"}},
	{conn: 1, cmd: []string{"SUBSCRIBE", "a"}},
	{conn: 1, cmd: []string{"PSUBSCRIBE", "a*"}},
	{conn: 1, cmd: []string{"SSUBSCRIBE", "s1", "s2"}},
	{conn: 2, cmd: []string{"PUBLISH", "a", "hello"}},
	{conn: 2, cmd: []string{"PUBLISH", "n.x", "bin\r\nary\x00"}},
	{conn: 2, cmd: []string{"PUBLISH", "nobody", "x"}},
	{conn: 2, cmd: []string{"PUBLISH", "b", ""}},
	{conn: 2, cmd: []string{"SPUBLISH", "s1", "shard"}},
	{conn: 2, cmd: []string{"SPUBLISH", "a", "not-a-shard-subscriber"}},
	{conn: 2, cmd: []string{"PUBSUB", "NUMSUB", "a", "b", "zz"}},
	{conn: 2, cmd: []string{"PUBSUB", "NUMSUB"}},
	{conn: 2, cmd: []string{"PUBSUB", "NUMPAT"}},
	{conn: 2, cmd: []string{"PUBSUB", "CHANNELS", "b*"}},
	{conn: 2, cmd: []string{"PUBSUB", "CHANNELS", "zz*"}},
	{conn: 2, cmd: []string{"PUBSUB", "SHARDCHANNELS", "s1"}},
	{conn: 2, cmd: []string{"PUBSUB", "SHARDNUMSUB", "s1", "s9"}},
	{conn: 0, cmd: []string{"PING"}},
	{conn: 0, cmd: []string{"PING", "hi"}},
	{conn: 0, cmd: []string{"GET", "k"}},
	{conn: 0, cmd: []string{"CLIENT", "ID"}},
	{conn: 0, cmd: []string{"PUBLISH", "a", "x"}},
	{conn: 1, cmd: []string{"GET", "k"}},
	{conn: 1, cmd: []string{"PING"}},
	{conn: 1, cmd: []string{"PUBLISH", "a", "self"}},
	{conn: 3, cmd: []string{"PUBLISH", "a", "r3"}},
	{conn: 0, cmd: []string{"UNSUBSCRIBE", "a"}},
	{conn: 0, cmd: []string{"UNSUBSCRIBE", "nosuch"}},
	{conn: 0, cmd: []string{"PUNSUBSCRIBE"}},
	{conn: 0, cmd: []string{"UNSUBSCRIBE"}},
	{conn: 0, cmd: []string{"UNSUBSCRIBE"}},
	{conn: 0, cmd: []string{"GET", "k"}},
	{conn: 0, cmd: []string{"PUNSUBSCRIBE"}},
	{conn: 0, cmd: []string{"SUNSUBSCRIBE"}},
	{conn: 0, cmd: []string{"PUNSUBSCRIBE", "x*", "y*"}},
	{conn: 1, cmd: []string{"SUNSUBSCRIBE", "s1"}},
	{conn: 1, cmd: []string{"SUNSUBSCRIBE"}},
	{conn: 1, cmd: []string{"HELLO", "2"}, skip: true},
	{conn: 1, cmd: []string{"GET", "k"}},
	{conn: 2, cmd: []string{"PUBLISH", "a", "after"}},
	{conn: 1, cmd: []string{"RESET"}},
	{conn: 2, cmd: []string{"PUBLISH", "a", "gone"}},
	{conn: 1, cmd: []string{"GET", "k"}},
	{conn: 0, cmd: []string{"SUBSCRIBE", "q"}},
	{conn: 0, cmd: []string{"QUIT"}},
	{conn: 2, cmd: []string{"PUBLISH", "q", "bye"}},
	{conn: 2, cmd: []string{"PUBSUB", "NUMSUB", "q"}},
	{conn: 2, cmd: []string{"SUBSCRIBE"}},
	{conn: 2, cmd: []string{"PUBLISH", "a"}},
	{conn: 2, cmd: []string{"PUBSUB", "FOO"}},
	{conn: 2, cmd: []string{"PUBSUB"}},
	{conn: 3, cmd: []string{"SUBSCRIBE", "t"}},
	{conn: 2, cmd: []string{"MULTI"}, then: [][]string{{"PUBLISH", "t", "in-multi"}, {"PUBLISH", "nobody", "x"}, {"EXEC"}}},
	{conn: 3, cmd: []string{"PUBLISH", "t", "to-myself"}},
	{conn: 3, cmd: []string{"PUBSUB", "NUMSUB", "t"}},
}

// runWire plays steps over fresh connections to the Unix socket sock and
// returns, step by step, the bytes each connection received. After each
// step every connection sends PING sync-<step>-<conn> and is read up to
// that answer, the acting connection first, so the messages a step sends
// are in the transcript of that step.
func runWire(t *testing.T, sock string, steps []wireStep) []string {
	t.Helper()
	n := 0
	for _, st := range steps {
		n = max(n, st.conn+1)
	}
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	closed := make([]bool, n)
	var out []string
	for k, st := range steps {
		c := conns[st.conn]
		c.SetDeadline(time.Now().Add(10 * time.Second))
		in := resp.AppendCommandString(nil, st.cmd...)
		for _, more := range st.then {
			in = resp.AppendCommandString(in, more...)
		}
		if _, err := c.Write(in); err != nil {
			t.Fatalf("step %d %q: %v", k, st.cmd, err)
		}
		order := []int{st.conn}
		for j := range conns {
			if j != st.conn {
				order = append(order, j)
			}
		}
		for _, j := range order {
			if closed[j] {
				continue
			}
			var got []byte
			if strings.EqualFold(st.cmd[0], "QUIT") && j == st.conn {
				got, _ = io.ReadAll(conns[j]) // +OK, then the end of the stream
				closed[j] = true
			} else {
				got = syncRead(t, conns[j], fmt.Sprintf("sync-%d-%d", k, j))
			}
			if st.skip && j == st.conn {
				got = []byte("(not compared)")
			}
			out = append(out, fmt.Sprintf("step %d %q conn %d: %q", k, st.cmd, j, got))
		}
	}
	return out
}

// syncRead sends PING marker on c and returns what c receives up to and
// including the marker's answer.
func syncRead(t *testing.T, c net.Conn, marker string) []byte {
	t.Helper()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(resp.AppendCommandString(nil, "PING", marker)); err != nil {
		t.Fatalf("PING %s: %v", marker, err)
	}
	var got []byte
	buf := make([]byte, 64<<10)
	for !bytes.HasSuffix(got, []byte(marker+"\r\n")) {
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			t.Fatalf("waiting for the answer to PING %s (received %q): %v", marker, got, err)
		}
	}
	return got
}

// TestPubSubWireAgainstRedis: four connections (two RESP2, two RESP3)
// subscribe, publish and unsubscribe; every byte each receives from
// goblin-server equals what it receives from redis-server 7.0: the
// confirmations and their counts, message, pmessage and smessage in
// array and push form, the RESP2 subscribed context's refusals and PING,
// a RESP3 client's messages to itself before its PUBLISH's answer, RESET
// and QUIT dropping subscriptions.
func TestPubSubWireAgainstRedis(t *testing.T) {
	theirs := startRedisServer(t)
	ours := startServer(t)
	want := runWire(t, theirs, pubsubScript)
	got := runWire(t, ours.sock, pubsubScript)
	if len(got) != len(want) {
		t.Fatalf("%d transcript lines, redis-server gave %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("goblin %s\n redis %s", got[i], want[i])
		}
	}
}

// TestPubSubRedisCLI: redis-cli SUBSCRIBE and PSUBSCRIBE (RESP2 and, with
// -3, RESP3) against goblin-server print what they print against
// redis-server 7.0 for the confirmation and two messages.
func TestPubSubRedisCLI(t *testing.T) {
	cli := needTool(t, "redis-cli")
	theirs := startRedisServer(t)
	ours := startServer(t)
	for _, args := range [][]string{{"SUBSCRIBE", "news"}, {"-3", "SUBSCRIBE", "news"}, {"PSUBSCRIBE", "ne*"}, {"-3", "PSUBSCRIBE", "ne*"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			want := cliSubscribe(t, cli, theirs, args)
			got := cliSubscribe(t, cli, ours.sock, args)
			if got != want {
				t.Fatalf("redis-cli %q against goblin-server printed\n%s\nagainst redis-server\n%s", args, got, want)
			}
		})
	}
}

// cliSubscribe runs redis-cli -s sock args, publishes two messages to
// "news" once it has subscribed, and returns what it printed.
func cliSubscribe(t *testing.T, cli, sock string, args []string) string {
	t.Helper()
	cmd := exec.Command(cli, append([]string{"-s", sock}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var got []string
	read := func(n int, what string) {
		deadline := time.After(10 * time.Second)
		for len(got) < n {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("redis-cli exited before %s; printed %q", what, got)
				}
				got = append(got, l)
			case <-deadline:
				t.Fatalf("redis-cli did not print %s within 10s; printed %q", what, got)
			}
		}
	}
	read(3, "its subscription")
	per := 3 // lines per message: message, channel, payload
	if strings.Contains(strings.Join(args, " "), "PSUBSCRIBE") {
		per = 4 // pmessage, pattern, channel, payload
	}
	c := dialRESP(t, sock)
	for i, msg := range []string{"hello", "two words"} {
		if n := c.do(t, "PUBLISH", "news", msg); n != ":1" {
			t.Fatalf("PUBLISH news: %s, want :1 (redis-cli subscribed)", n)
		}
		read(3+per*(i+1), "message "+strconv.Itoa(i+1))
	}
	return strings.Join(got, "\n")
}

// respConn is a bare RESP connection for a test's own commands.
type respConn struct {
	c net.Conn
	r *bufio.Reader
}

func dialRESP(t *testing.T, sock string) *respConn {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &respConn{c: c, r: bufio.NewReader(c)}
}

// do sends one command and returns its answer's first line (the whole
// answer for a simple, error or integer reply; a bulk's body is read and
// appended after a space).
func (rc *respConn) do(t *testing.T, args ...string) string {
	t.Helper()
	rc.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := rc.c.Write(resp.AppendCommandString(nil, args...)); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	l, err := rc.r.ReadString('\n')
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	l = strings.TrimSuffix(l, "\r\n")
	if strings.HasPrefix(l, "$") && l != "$-1" {
		n, _ := strconv.Atoi(l[1:])
		body := make([]byte, n+2)
		if _, err := io.ReadFull(rc.r, body); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		l += " " + string(body[:n])
	}
	return l
}

// TestPubSubGoRedis: go-redis v9's PubSub (Subscribe, PSubscribe,
// Channel, Unsubscribe) against goblin-server, in RESP2 and RESP3, gets
// the same messages and counts as against redis-server 7.0.
func TestPubSubGoRedis(t *testing.T) {
	theirs := startRedisServer(t)
	ours := startServer(t)
	for _, protocol := range []int{2, 3} {
		t.Run("RESP"+strconv.Itoa(protocol), func(t *testing.T) {
			want := goRedisPubSub(t, theirs, protocol)
			got := goRedisPubSub(t, ours.sock, protocol)
			if got != want {
				t.Fatalf("go-redis against goblin-server:\n%s\nagainst redis-server:\n%s", got, want)
			}
		})
	}
}

func goRedisPubSub(t *testing.T, sock string, protocol int) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, Protocol: protocol})
	defer c.Close()
	var log []string
	ps := c.Subscribe(ctx, "news", "sport")
	defer ps.Close()
	for range 2 {
		m, err := ps.Receive(ctx)
		if err != nil {
			t.Fatalf("Receive: %v", err)
		}
		log = append(log, fmt.Sprintf("%#v", m))
	}
	if err := ps.PSubscribe(ctx, "n*"); err != nil {
		t.Fatal(err)
	}
	m, err := ps.Receive(ctx)
	if err != nil {
		t.Fatalf("Receive: %v", err)
	}
	log = append(log, fmt.Sprintf("%#v", m))
	ch := ps.Channel()
	for _, p := range [][2]string{{"news", "one"}, {"sport", "two"}, {"nothing", "three"}, {"weather", "four"}} {
		n, err := c.Publish(ctx, p[0], p[1]).Result()
		log = append(log, fmt.Sprintf("PUBLISH %s %s: %d %v", p[0], p[1], n, err))
	}
	for range 4 { // news twice (channel and pattern), sport, nothing (pattern)
		select {
		case m := <-ch:
			log = append(log, fmt.Sprintf("%s %s %s", m.Pattern, m.Channel, m.Payload))
		case <-ctx.Done():
			t.Fatalf("no message within the timeout; so far %q", log)
		}
	}
	n, err := c.PubSubNumSub(ctx, "news", "sport", "x").Result()
	log = append(log, fmt.Sprintf("NUMSUB %v %v", n, err))
	np, err := c.PubSubNumPat(ctx).Result()
	log = append(log, fmt.Sprintf("NUMPAT %v %v", np, err))
	if err := ps.Unsubscribe(ctx, "news"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []int{1} { // sport remains
		deadline := time.Now().Add(10 * time.Second)
		for {
			n, err := c.PubSubNumSub(ctx, "news").Result()
			if err == nil && n["news"] == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("news still has subscribers after Unsubscribe: %v %v (want %d channel left)", n, err, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return strings.Join(log, "\n")
}

// TestPubSubSlowSubscriberCut: with client-output-buffer-limit pubsub at
// 1 MB hard, a subscriber that never reads is disconnected once goblin
// has queued that much for it; a subscriber that reads receives every
// message, PUBLISH counts one receiver fewer from then on, and the server
// goes on answering.
func TestPubSubSlowSubscriberCut(t *testing.T) {
	s := startServer(t)
	admin := dialRESP(t, s.sock)
	if got := admin.do(t, "CONFIG", "SET", "client-output-buffer-limit", "pubsub 1mb 0 0"); got != "+OK" {
		t.Fatalf("CONFIG SET client-output-buffer-limit: %s", got)
	}
	if got := admin.do(t, "CONFIG", "GET", "client-output-buffer-limit"); got != "*2" {
		t.Fatalf("CONFIG GET client-output-buffer-limit: %s", got)
	}
	for range 3 { // $26, the name, the value's length
		admin.r.ReadString('\n')
	}
	if l, _ := admin.r.ReadString('\n'); !strings.Contains(l, "pubsub 1048576 0 0") {
		t.Fatalf("CONFIG GET client-output-buffer-limit: %q, want pubsub 1048576 0 0", l)
	}

	slow, err := net.Dial("unix", s.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	slow.(*net.UnixConn).SetReadBuffer(4096)
	fast := dialRESP(t, s.sock)
	subscribe := resp.AppendCommandString(nil, "SUBSCRIBE", "ch")
	confirm := "*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"
	for _, c := range []net.Conn{slow, fast.c} {
		c.SetDeadline(time.Now().Add(10 * time.Second))
		c.Write(subscribe)
		got := make([]byte, len(confirm))
		if _, err := io.ReadFull(c, got); err != nil || string(got) != confirm {
			t.Fatalf("SUBSCRIBE ch: %q %v", got, err)
		}
	}

	const msgs, size = 800, 8 << 10 // 6.4 MB in all, well past the limit and the sockets' buffers
	payload := strings.Repeat("x", size)
	var wg sync.WaitGroup
	var fastGot int
	var fastErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		fast.c.SetDeadline(time.Now().Add(60 * time.Second))
		head := "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$" + strconv.Itoa(size) + "\r\n"
		buf := make([]byte, len(head)+size+2)
		for fastGot < msgs {
			if _, err := io.ReadFull(fast.r, buf); err != nil {
				fastErr = err
				return
			}
			if string(buf[:len(head)]) != head {
				fastErr = fmt.Errorf("message %d starts %q", fastGot, buf[:len(head)])
				return
			}
			fastGot++
		}
	}()

	pub := dialRESP(t, s.sock)
	counts := map[string]int{}
	for range msgs {
		counts[pub.do(t, "PUBLISH", "ch", payload)]++
	}
	wg.Wait()
	if fastErr != nil || fastGot != msgs {
		t.Fatalf("the reading subscriber got %d of %d messages: %v", fastGot, msgs, fastErr)
	}
	if counts[":1"] == 0 || counts[":2"] == 0 || len(counts) != 2 {
		t.Fatalf("PUBLISH answers %v: want :2 until the slow subscriber is cut, :1 after", counts)
	}
	// The slow subscriber's connection is closed: what the kernel holds,
	// then the end of the stream.
	slow.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := io.Copy(io.Discard, slow)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the slow subscriber's connection was not closed within 10s (read %d bytes)", n)
	}
	if n >= int64(msgs*size) {
		t.Fatalf("the slow subscriber received %d bytes: everything, it was never cut", n)
	}
	if got := pub.do(t, "PUBSUB", "NUMSUB", "ch"); got != "*2" {
		t.Fatalf("PUBSUB NUMSUB ch: %s", got)
	}
	pub.r.ReadString('\n')
	pub.r.ReadString('\n')
	if l, _ := pub.r.ReadString('\n'); l != ":1\r\n" {
		t.Fatalf("PUBSUB NUMSUB ch counts %q, want :1 (the slow subscriber gone)", l)
	}
	if got := pub.do(t, "PING"); got != "+PONG" {
		t.Fatalf("PING after the cut: %s", got)
	}
	s.p.WaitLog(t, `level=WARN msg="client disconnected: a subscriber over client-output-buffer-limit pubsub" id=\d+ addr=\S+ queued=\d+ hard=1048576`, 10*time.Second)
	if info := pub.do(t, "INFO", "stats"); !strings.Contains(info, "goblin_pubsub_output_limit_disconnections:1\r\n") {
		t.Fatalf("INFO stats does not count the cut: %q", info)
	}
}

// TestPubSubOverRing: the shared-memory ring carries one reply per
// request, so SUBSCRIBE there answers a clear error (sent raw: the Go
// client refuses it before sending, ErrModeCommand); PUBLISH over the
// ring reaches a subscriber on the Unix socket.
func TestPubSubOverRing(t *testing.T) {
	ring := "ring://" + filepath.Join(t.TempDir(), "ring") + "?proto=resp"
	s := startServer(t, "--listen", ring)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tgt, err := transport.ParseTarget(ring)
	if err != nil {
		t.Fatal(err)
	}
	d, err := transport.LookupDialer(tgt.Scheme)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := d.Dial(ctx, tgt)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetDeadline(time.Now().Add(30 * time.Second))
	for _, cmd := range []string{"SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE"} {
		want := "-ERR " + cmd + " needs a socket connection (this transport cannot send to a client out of turn)\r\n"
		if err := raw.Write(resp.AppendCommandString(nil, cmd, "news")); err != nil {
			t.Fatal(err)
		}
		if got, err := raw.ReadAppend(nil); err != nil || string(got) != want {
			t.Errorf("%s over the ring: %q %v, want %q", cmd, got, err, want)
		}
	}
	c, err := client.Dial(ctx, ring)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sub := dialRESP(t, s.sock)
	if got := sub.do(t, "SUBSCRIBE", "news"); got != "*3" {
		t.Fatalf("SUBSCRIBE on the socket: %s", got)
	}
	v, err := c.Do(ctx, "PUBLISH", "news", "from the ring")
	if err != nil || v.Int != 1 {
		t.Fatalf("PUBLISH over the ring: %v %v, want 1", v, err)
	}
	want := "*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$13\r\nfrom the ring\r\n"
	got := make([]byte, len("$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n")+len(want))
	if _, err := io.ReadFull(sub.r, got); err != nil || !strings.HasSuffix(string(got), want) {
		t.Fatalf("the socket subscriber read %q (%v), want the confirmation then %q", got, err, want)
	}
}

// TestPubSubSubscriberNotIdle: with --timeout 1s a client that sends
// nothing is disconnected, but a subscriber waiting for messages is not
// (Redis's timeout spares Pub/Sub clients), and still receives.
func TestPubSubSubscriberNotIdle(t *testing.T) {
	s := startServer(t, "--timeout", "1s")
	sub := dialRESP(t, s.sock)
	if got := sub.do(t, "SUBSCRIBE", "news"); got != "*3" {
		t.Fatalf("SUBSCRIBE: %s", got)
	}
	confirm := make([]byte, len("$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n"))
	if _, err := io.ReadFull(sub.r, confirm); err != nil {
		t.Fatal(err)
	}
	idle := dialRESP(t, s.sock)
	if got := idle.do(t, "PING"); got != "+PONG" {
		t.Fatalf("PING: %s", got)
	}
	idle.c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := idle.r.ReadByte(); err != io.EOF {
		t.Fatalf("a client silent past --timeout: read %v, want the end of the stream", err)
	}
	// The subscriber was as silent, longer.
	pub := dialRESP(t, s.sock)
	if got := pub.do(t, "PUBLISH", "news", "still here"); got != ":1" {
		t.Fatalf("PUBLISH after the timeout: %s, want :1 (the subscriber kept)", got)
	}
	want := "*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$10\r\nstill here\r\n"
	got := make([]byte, len(want))
	sub.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(sub.r, got); err != nil || string(got) != want {
		t.Fatalf("the subscriber read %q, %v; want %q", got, err, want)
	}
}
