package engine

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/rdb"
)

// A replica may apply its primary's stream late: its clock already past
// the absolute expiries the stream carries (SET PXAT, PEXPIREAT, RESTORE
// ABSTTL, all written while the primary's clock was before them). Redis's
// replica never expires a key itself: the master client sees such keys as
// live (INCR counts on), and only the primary's DEL removes them; normal
// clients' reads answer them as missing meanwhile.

// lateKeys are the keys lateScript writes (the __done__ marker aside).
var lateKeys = []string{"s", "n", "h", "l", "z", "r", "keep", "del"}

// lateScript is the primary's stream, its absolute times past (a second
// before now) or to come (an hour after).
func lateScript(now int64, payload string) [][]string {
	past, future := strconv.FormatInt(now-1000, 10), strconv.FormatInt(now+3600_000, 10)
	return [][]string{
		{"SELECT", "0"},
		{"SET", "s", "v", "PXAT", past},
		{"SET", "n", "10", "PXAT", past}, {"INCR", "n"}, {"INCRBY", "n", "5"},
		{"HSET", "h", "f", "v"}, {"PEXPIREAT", "h", past}, {"HSET", "h", "g", "w"},
		{"RPUSH", "l", "a", "b"}, {"PEXPIREAT", "l", past}, {"RPUSH", "l", "c"},
		{"SADD", "z", "x"}, {"PEXPIREAT", "z", past}, {"SADD", "z", "y"},
		{"RESTORE", "r", past, payload, "ABSTTL"},
		{"SET", "keep", "v", "PXAT", future},
		{"SET", "del", "v", "PXAT", past}, {"DEL", "del"},
	}
}

// persistAll is the stream's end: PERSIST of every key (the master client
// sees the expired keys, so this makes what the replica holds readable).
func persistAll() [][]string {
	var out [][]string
	for _, k := range lateKeys {
		out = append(out, []string{"PERSIST", k})
	}
	return out
}

// lateView is what a normal client of the replica reads.
func lateView() [][]string {
	v := [][]string{{"DBSIZE"}}
	for _, k := range lateKeys {
		v = append(v, []string{"TYPE", k})
	}
	return append(v, []string{"GET", "s"}, []string{"GET", "n"}, []string{"HGETALL", "h"},
		[]string{"LRANGE", "l", "0", "-1"}, []string{"SORT_RO", "z", "ALPHA"}, []string{"GET", "r"}, []string{"GET", "keep"})
}

func restorePayload(t testing.TB) string {
	t.Helper()
	p, err := rdb.AppendDump(nil, &rdb.Value{Kind: rdb.KindString, Str: []byte("restored")})
	if err != nil {
		t.Fatal(err)
	}
	return string(p)
}

// goblinLate applies the script to a goblin replica whose clock reads now,
// and returns the replica's view before and after the PERSISTs.
func goblinLate(t *testing.T, now int64, payload string) (before, after []string) {
	e, clock := newEngine(t, Options{Replica: ReplicaOptions{Control: &fakeLink{}}})
	clock.Set(now)
	c := e.Open(proto.RESP, nil)
	do(t, e, c, "REPLICAOF", "primary", "6379")
	e.SetMasterLink(true)
	var in []byte
	for _, a := range lateScript(now, payload) {
		in = resp.AppendCommandString(in, a...)
	}
	if n, _, _ := e.ApplyMaster(in, 0); n != len(in) {
		t.Fatalf("ApplyMaster consumed %d of %d bytes", n, len(in))
	}
	if _, errs := e.ReplicaSkipped(); errs != 0 {
		t.Fatalf("%d of the stream's commands answered an error", errs)
	}
	for i := 0; i < 50; i++ { // a replica's Tick expires nothing
		clock.Advance(200 * time.Millisecond)
		e.Tick(1 << 20)
	}
	view := func() (out []string) {
		for _, a := range lateView() {
			out = append(out, do(t, e, c, a...))
		}
		return out
	}
	before = view()
	in = in[:0]
	for _, a := range persistAll() {
		in = resp.AppendCommandString(in, a...)
	}
	e.ApplyMaster(in, 0)
	return before, view()
}

// TestReplicaAppliesLateStreamWithoutDeleting: goblin as a late replica
// keeps every key the primary keeps (DBSIZE 7, del gone by its DEL),
// counts n on from 10, keeps the hash, list and set it added to after
// their expiry was set, and creates r from RESTORE ABSTTL; its clients'
// reads answer all but keep as missing until the primary's PERSIST.
func TestReplicaAppliesLateStreamWithoutDeleting(t *testing.T) {
	now := time.Now().UnixMilli()
	before, after := goblinLate(t, now, restorePayload(t))
	if before[0] != ":7" {
		t.Fatalf("DBSIZE on the late replica = %s, want :7 (every key but del, which the primary deleted)", before[0])
	}
	for i, k := range lateKeys {
		want := "+none"
		if k == "keep" {
			want = "+string"
		}
		if got := before[1+i]; got != want {
			t.Errorf("TYPE %s before the PERSIST = %s, want %s", k, got, want)
		}
	}
	wantAfter := map[string]string{"GET s": "$v", "GET n": "$16", "HGETALL h": "[$f $v $g $w]",
		"LRANGE l 0 -1": "[$a $b $c]", "GET r": "$restored", "GET keep": "$v"}
	for i, a := range lateView() {
		if w, ok := wantAfter[strings.Join(a, " ")]; ok && after[i] != w {
			t.Errorf("%s after the PERSIST = %s, want %s", strings.Join(a, " "), after[i], w)
		}
	}
	if after[0] != ":7" {
		t.Errorf("DBSIZE after the PERSIST = %s, want :7", after[0])
	}
}

// TestReplicaAppliesLateStreamAsRedis: the same late stream sent by a fake
// primary to a redis-server 7.0 replica: what redis's replica holds and
// shows, goblin's holds and shows.
func TestReplicaAppliesLateStreamAsRedis(t *testing.T) {
	bin := testkit.Need(t, "redis-server", "the redis-server replica goblin's is compared with")
	now := time.Now().UnixMilli()
	payload := restorePayload(t)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	stream := make(chan [][]string, 2)
	primaryErr := make(chan error, 1)
	go fakePrimary(ln, stream, primaryErr)

	dir := t.TempDir()
	sock := filepath.Join(dir, "replica.sock")
	testproc.Start(t, bin, "--port", "0", "--unixsocket", sock, "--dir", dir, "--save", "", "--appendonly", "no")
	var rc net.Conn
	testkit.Eventually(t, 20*time.Second, "redis-server listening on "+sock, func() (bool, string) {
		rc, err = net.Dial("unix", sock)
		return err == nil, fmt.Sprint(err)
	})
	defer rc.Close()
	r := &redisConn{t: t, c: rc, rd: bufio.NewReader(rc)}
	r.do("REPLICAOF", "127.0.0.1", strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	// The stream's times are real ones; redis's clock is the real clock.
	stream <- append(lateScript(now, payload), []string{"SET", "__done__", "1"})
	waitDone := func(mark string) {
		testkit.Eventually(t, 20*time.Second, "redis's replica to apply the fake primary's stream up to "+mark, func() (bool, string) {
			select {
			case err := <-primaryErr:
				t.Fatalf("the fake primary: %v", err)
			default:
			}
			got := r.do("GET", mark)
			return got == "$1", fmt.Sprintf("GET %s = %s, %.160s", mark, got, strings.ReplaceAll(r.do("INFO", "replication"), "\r\n", " "))
		})
	}
	waitDone("__done__")
	time.Sleep(300 * time.Millisecond) // the replica's cron runs; it must expire nothing
	// view reads what redis's replica shows, less the markers keys the
	// fake primary wrote (they are not goblin's).
	view := func(markers int) (out []string) {
		for _, a := range lateView() {
			got := r.do(a...)
			if a[0] == "DBSIZE" {
				n, _ := strconv.Atoi(strings.TrimPrefix(got, ":"))
				got = ":" + strconv.Itoa(n-markers)
			}
			out = append(out, got)
		}
		return out
	}
	redisBefore := view(1)
	stream <- append(persistAll(), []string{"SET", "__done2__", "1"})
	waitDone("__done2__")
	redisAfter := view(2)

	before, after := goblinLate(t, now, payload)
	for i, a := range lateView() {
		if before[i] != redisBefore[i] {
			t.Errorf("before the PERSIST, %s: goblin %s, redis %s", strings.Join(a, " "), before[i], redisBefore[i])
		}
		if after[i] != redisAfter[i] {
			t.Errorf("after the PERSIST, %s: goblin %s, redis %s", strings.Join(a, " "), after[i], redisAfter[i])
		}
	}
	t.Logf("redis's late replica: %v then %v", redisBefore, redisAfter)
}

// redisConn is one RESP2 connection to a redis-server.
type redisConn struct {
	t  testing.TB
	c  net.Conn
	rd *bufio.Reader
}

// do sends one command and returns its reply as respText renders it.
func (r *redisConn) do(args ...string) string {
	r.t.Helper()
	_ = r.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := r.c.Write(resp.AppendCommandString(nil, args...)); err != nil {
		r.t.Fatal(err)
	}
	var buf []byte
	for {
		if _, k, err := parseNode(buf); err == nil && k > 0 {
			got, _ := respText(r.t, buf[:k])
			return got
		}
		line, err := r.rd.ReadBytes('\n')
		if err != nil {
			r.t.Fatalf("%q: reading redis's reply: %v", args, err)
		}
		buf = append(buf, line...)
	}
}

// emptyRDB is an RDB file of no keys, Redis 7.0's version 10, its checksum
// 0 (not checked).
const emptyRDB = "REDIS0010\xff\x00\x00\x00\x00\x00\x00\x00\x00"

// fakePrimary is the primary end of Redis's replication protocol for one
// replica: the handshake, +FULLRESYNC with an empty snapshot, then each
// script received on stream as commands. The replica's REPLCONF ACKs are
// read and dropped.
func fakePrimary(ln net.Listener, stream <-chan [][]string, errs chan<- error) {
	c, err := ln.Accept()
	if err != nil {
		errs <- err
		return
	}
	defer c.Close()
	rd := bufio.NewReader(c)
	readCmd := func() ([]string, error) {
		line, err := rd.ReadString('\n')
		if err != nil {
			return nil, err
		}
		n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "*")))
		if err != nil || !strings.HasPrefix(line, "*") {
			return nil, fmt.Errorf("the replica sent %q, not a RESP array", line)
		}
		args := make([]string, n)
		for i := range args {
			if line, err = rd.ReadString('\n'); err != nil {
				return nil, err
			}
			l, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "$")))
			b := make([]byte, l+2)
			if _, err := io.ReadFull(rd, b); err != nil {
				return nil, err
			}
			args[i] = string(b[:l])
		}
		return args, nil
	}
	for {
		args, err := readCmd()
		if err != nil {
			errs <- fmt.Errorf("the handshake: %w", err)
			return
		}
		switch strings.ToUpper(args[0]) {
		case "PING":
			_, err = io.WriteString(c, "+PONG\r\n")
		case "REPLCONF":
			_, err = io.WriteString(c, "+OK\r\n")
		case "PSYNC":
			_, err = fmt.Fprintf(c, "+FULLRESYNC %s 0\r\n$%d\r\n%s", strings.Repeat("ab", 20), len(emptyRDB), emptyRDB)
		default:
			err = fmt.Errorf("the replica sent %q in the handshake", args)
		}
		if err != nil {
			errs <- err
			return
		}
		if strings.EqualFold(args[0], "PSYNC") {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, rd) }() // REPLCONF ACK
	for script := range stream {
		var b []byte
		for _, a := range script {
			b = resp.AppendCommandString(b, a...)
		}
		if _, err := c.Write(b); err != nil {
			errs <- err
			return
		}
	}
}

// A full resynchronisation loads the keys whose time has passed, as a
// Redis replica's rdbLoad does (only a primary drops them): the primary
// still holds them and its DEL, or its INCR, follows in the stream.
func TestFullSyncLoadsExpiredKeys(t *testing.T) {
	e, clock := newEngine(t, Options{Replica: ReplicaOptions{Control: &fakeLink{}}})
	c := e.Open(proto.RESP, nil)
	do(t, e, c, "REPLICAOF", "primary", "6379")
	past := clock.NowMillis() - 1000
	e.BeginFullSync()
	for _, en := range []rdb.Entry{
		{Key: []byte("n"), Expiry: past, Value: rdb.Value{Kind: rdb.KindString, Str: []byte("10")}},
		{Key: []byte("h"), Expiry: past, Value: rdb.Value{Kind: rdb.KindHash, Items: [][]byte{[]byte("f"), []byte("v")}}},
		{Key: []byte("live"), Expiry: rdb.NoExpiry, Value: rdb.Value{Kind: rdb.KindString, Str: []byte("v")}},
	} {
		if err := e.LoadEntry(&en); err != nil {
			t.Fatal(err)
		}
	}
	e.EndFullSync(true)
	e.SetMasterLink(true)
	if got := do(t, e, c, "DBSIZE"); got != ":3" {
		t.Fatalf("DBSIZE after loading two expired keys and a live one = %s, want :3", got)
	}
	if got := do(t, e, c, "GET", "n"); got != "nil" {
		t.Fatalf("GET of a loaded expired key = %s, want nil", got)
	}
	e.ApplyMaster(cmds([]string{"INCR", "n"}, []string{"PERSIST", "n"}), 0)
	if got := do(t, e, c, "GET", "n"); got != "$11" {
		t.Fatalf("GET n after the primary's INCR and PERSIST = %s, want 11 (counted on from the snapshot)", got)
	}
}

// A full resynchronisation applies each key's access record as the load at
// start does (Redis's rdbLoad, objectSetLRUOrLFU): the LFU counter under an
// LFU policy, the idle time under an LRU one; -1 leaves the default.
func TestFullSyncKeepsAccessRecords(t *testing.T) {
	for _, tc := range []struct {
		policy, query, want, wantNone string
	}{
		{"allkeys-lfu", "FREQ", ":42", ":5"},
		{"allkeys-lru", "IDLETIME", ":5000", ":0"},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			e, _ := newEngine(t, Options{Replica: ReplicaOptions{Control: &fakeLink{}}})
			c := e.Open(proto.RESP, nil)
			do(t, e, c, "CONFIG", "SET", "maxmemory-policy", tc.policy)
			do(t, e, c, "REPLICAOF", "primary", "6379")
			e.BeginFullSync()
			for _, en := range []rdb.Entry{
				{Key: []byte("s"), Expiry: rdb.NoExpiry, Idle: 5000, Freq: 42, Value: rdb.Value{Kind: rdb.KindString, Str: []byte("v")}},
				{Key: []byte("h"), Expiry: rdb.NoExpiry, Idle: 5000, Freq: 42, Value: rdb.Value{Kind: rdb.KindHash, Items: [][]byte{[]byte("f"), []byte("v")}}},
				{Key: []byte("none"), Expiry: rdb.NoExpiry, Idle: -1, Freq: -1, Value: rdb.Value{Kind: rdb.KindString, Str: []byte("v")}},
			} {
				if err := e.LoadEntry(&en); err != nil {
					t.Fatal(err)
				}
			}
			e.EndFullSync(true)
			e.SetMasterLink(true)
			for _, k := range []string{"s", "h"} {
				if got := do(t, e, c, "OBJECT", tc.query, k); got != tc.want {
					t.Errorf("OBJECT %s %s after a full sync = %s, want %s (the primary's record)", tc.query, k, got, tc.want)
				}
			}
			if got := do(t, e, c, "OBJECT", tc.query, "none"); got != tc.wantNone {
				t.Errorf("OBJECT %s of a key sent without a record = %s, want %s", tc.query, got, tc.wantNone)
			}
		})
	}
}
