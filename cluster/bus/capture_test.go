package bus

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

var update = flag.Bool("update", false, "rewrite testdata with the messages TestCaptureRedis70 captures")

func TestMain(m *testing.M) { testproc.Main(m) }

// TestCaptureRedis70 captures what a live redis-server 7.0 sends a new
// peer: the MEET after CLUSTER MEET, and, once this test's fake node has
// answered with a PONG built by this package, a PING whose gossip names
// the third node. It checks both the way TestGoldenRedis70 checks the
// stored copies (decoded fields, byte-exact re-encoding) and checks the
// gossip entry against the third node's real id and ports. With -update
// it rewrites testdata.
func TestCaptureRedis70(t *testing.T) {
	t.Parallel()
	a := testproc.StartRedisClusterNode(t, "--cluster-node-timeout", "1000", "--cluster-announce-hostname", "myhost.example")
	b := testproc.StartRedisClusterNode(t, "--cluster-node-timeout", "1000")
	ctx := context.Background()
	ca := redis.NewClient(&redis.Options{Addr: a.Addr})
	defer ca.Close()
	cb := redis.NewClient(&redis.Options{Addr: b.Addr})
	defer cb.Close()
	if err := ca.ClusterAddSlotsRange(ctx, 0, 2).Err(); err != nil {
		t.Fatal(err)
	}
	if err := ca.ClusterAddSlots(ctx, 5000).Err(); err != nil {
		t.Fatal(err)
	}
	if err := ca.Do(ctx, "CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(b.Port), strconv.Itoa(b.BusPort)).Err(); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	aID := ca.ClusterMyID(ctx).Val()
	bID := cb.ClusterMyID(ctx).Val()
	// Wait until a and b know each other, so a's PINGs to us gossip b.
	deadline := time.Now().Add(20 * time.Second)
	for !knows(ca, bID) || !knows(cb, aID) {
		if time.Now().After(deadline) {
			t.Fatal("redis-server a and b never completed their handshake")
		}
		time.Sleep(50 * time.Millisecond)
	}
	cport := ln.Addr().(*net.TCPAddr).Port
	if err := ca.Do(ctx, "CLUSTER", "MEET", "127.0.0.1", "1", strconv.Itoa(cport)).Err(); err != nil {
		t.Fatal(err)
	}
	var me Name
	var raw [20]byte
	_, _ = rand.Read(raw[:])
	hex.Encode(me[:], raw[:])
	got := make(chan [2][]byte, 1)
	testproc.Serve(t, ln, func(c net.Conn) {
		var rd Reader
		var meet []byte
		buf := make([]byte, 64<<10)
		for {
			_ = c.SetReadDeadline(time.Now().Add(15 * time.Second))
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			rd.Write(buf[:n])
			for {
				m, err := rd.Next()
				if err != nil {
					t.Error(err)
					return
				}
				if m == nil {
					break
				}
				var h Header
				_ = h.Decode(m)
				if string(h.Sender[:]) != aID {
					continue // b, once it learns of us by gossip
				}
				if h.Type == Meet && meet == nil {
					meet = append([]byte(nil), m...)
				}
				if h.Type == Ping && h.Count > 0 && meet != nil && gossips(m, bID) {
					select {
					case got <- [2][]byte{meet, append([]byte(nil), m...)}:
					default:
					}
				}
				if h.Type == Meet || h.Type == Ping {
					pong := Header{Ver: 1, Type: Pong, Port: 1, CPort: uint16(cport), Sender: me, Flags: FlagMaster | FlagMyself}
					if _, err := c.Write(Finish(pong.Append(nil), 0, 0)); err != nil {
						return
					}
				}
			}
		}
	})
	var msgs [2][]byte
	select {
	case msgs = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("redis-server never sent a MEET and then a PING with gossip to the fake node")
	}
	for i, name := range []string{"meet-7.0.15.bin", "ping-7.0.15.bin"} {
		msg := msgs[i]
		if err := Check(msg); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkRedisSender(t, msg)
		var h Header
		_ = h.Decode(msg)
		if string(h.Sender[:]) != aID || int(h.Port) != a.Port || int(h.CPort) != a.BusPort {
			t.Errorf("%s: sender %s port %d cport %d, want %s %d %d", name, h.Sender[:], h.Port, h.CPort, aID, a.Port, a.BusPort)
		}
		if re := reencode(t, msg); string(re) != string(msg) {
			t.Errorf("%s: re-encoded differs:\n got %x\nwant %x", name, re, msg)
		}
		if *update {
			// Ports and ids vary per run; the stored copy is this run's.
			if err := os.WriteFile(filepath.Join("testdata", name), msg, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// With three nodes known, Redis gossips at most one (N-2) in the MEET,
	// drawn at random: 0 or 1 entries, then the 24-byte hostname.
	if h := (Header{}); h.Decode(msgs[0]) == nil && (h.Type != Meet || h.Count > 1 || len(msgs[0]) != HeaderSize+GossipSize*int(h.Count)+24 || h.State != StateFail) {
		t.Errorf("MEET: type %d count %d totlen %d state %d, want 2, ≤1, 2280+104·count, 1 (fail: a has 4 slots)", h.Type, h.Count, len(msgs[0]), h.State)
	}
	var g Gossip
	GossipAt(msgs[1], 0, &g)
	var h1 Header
	_ = h1.Decode(msgs[1])
	for i := range int(h1.Count) {
		if GossipAt(msgs[1], i, &g); string(g.Name[:]) == bID {
			break
		}
	}
	if string(g.Name[:]) != bID || int(g.Port) != b.Port || int(g.CPort) != b.BusPort || g.Flags != FlagMaster || g.IP.String() != "127.0.0.1" {
		t.Errorf("PING gossip: %s %s:%d@%d flags %d, want %s 127.0.0.1:%d@%d flags 1", g.Name[:], g.IP.String(), g.Port, g.CPort, g.Flags, bID, b.Port, b.BusPort)
	}
}

// gossips reports whether the PING msg has a gossip entry about id.
func gossips(msg []byte, id string) bool {
	var h Header
	_ = h.Decode(msg)
	var g Gossip
	for i := range int(h.Count) {
		GossipAt(msg, i, &g)
		if string(g.Name[:]) == id {
			return true
		}
	}
	return false
}

func knows(c *redis.Client, id string) bool {
	nodes, err := c.ClusterNodes(context.Background()).Result()
	if err != nil {
		return false
	}
	for _, line := range strings.Split(nodes, "\n") {
		if len(line) > 40 && line[:40] == id && !strings.Contains(line, "handshake") && strings.Contains(line, "connected") {
			return true
		}
	}
	return false
}
