package collection

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// rdbString reads one RDB length-prefixed string (uncompressed) from p.
func rdbString(t *testing.T, p []byte) (s, rest []byte) {
	t.Helper()
	n, p := rdbLen(t, p)
	return p[:n], p[n:]
}

func rdbLen(t *testing.T, p []byte) (int, []byte) {
	t.Helper()
	switch b := p[0]; b >> 6 {
	case 0:
		return int(b & 0x3F), p[1:]
	case 1:
		return int(b&0x3F)<<8 | int(p[1]), p[2:]
	case 2:
		if b == 0x80 {
			return int(binary.BigEndian.Uint32(p[1:])), p[5:]
		}
	}
	t.Fatalf("unexpected RDB length byte %#x (compression should be off)", p[0])
	return 0, nil
}

// The listpacks and intsets redis-server 7.0 builds (read back with DUMP, RDB
// compression off) equal the ones Append and Add build from the same writes,
// byte for byte: an RDB writer can store ours unchanged.
func TestRedisBuildsTheSameBlobs(t *testing.T) {
	bin := testkit.Need(t, "redis-server", "the listpack and intset bytes Redis writes")
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	testproc.Start(t, bin, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--dir", dir,
		"--rdbcompression", "no", "--list-max-listpack-size", "-5")
	testproc.WaitDial(t, "unix", sock, 30*time.Second)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: 1, Protocol: 2})
	defer c.Close()
	r := rand.New(rand.NewPCG(7, 8))

	for round := 0; round < 40; round++ {
		// A list: pushes at both ends of mixed integers and strings.
		var elems []string
		n := 1 + r.IntN(120)
		for len(elems) < n {
			// A list node holds at most 64 KiB here (list-max-listpack-size -5).
			if e := randElem(r); len(e) < 400 || r.IntN(20) == 0 {
				elems = append(elems, e)
			}
		}
		c.Del(ctx, "l", "h", "s")
		lp := NewListpack(nil)
		for _, e := range elems {
			if r.IntN(2) == 0 {
				c.RPush(ctx, "l", e)
				lp = lp.Append([]byte(e))
			} else {
				c.LPush(ctx, "l", e)
				lp = lp.Prepend([]byte(e))
			}
		}
		d, err := c.Dump(ctx, "l").Bytes()
		if err != nil {
			t.Fatal(err)
		}
		if d[0] != 18 { // RDB_TYPE_LIST_QUICKLIST_2
			t.Fatalf("list type %d", d[0])
		}
		nodes, p := rdbLen(t, d[1:])
		if nodes != 1 {
			t.Fatalf("%d quicklist nodes, want 1", nodes)
		}
		_, p = rdbLen(t, p) // container: 2 = packed
		blob, _ := rdbString(t, p)
		if !bytes.Equal(blob, lp) {
			t.Fatalf("round %d list: redis % x\nours % x", round, blob, []byte(lp))
		}

		// A hash of a few fields, in the order HSET added them.
		hp := NewListpack(nil)
		seen := map[string]bool{}
		for range 1 + r.IntN(60) {
			f, v := strconv.Itoa(r.IntN(200)), strconv.Itoa(r.IntN(100000)-50000)
			if r.IntN(2) == 0 {
				f = "f" + f
			}
			if r.IntN(3) == 0 {
				v = "0" + v // not canonical: stays a string
			}
			if seen[f] {
				continue
			}
			seen[f] = true
			c.HSet(ctx, "h", f, v)
			hp = hp.Append([]byte(f)).Append([]byte(v))
		}
		d, err = c.Dump(ctx, "h").Bytes()
		if err != nil {
			t.Fatal(err)
		}
		if d[0] != 16 { // RDB_TYPE_HASH_LISTPACK
			t.Fatalf("hash type %d", d[0])
		}
		if blob, _ = rdbString(t, d[1:]); !bytes.Equal(blob, hp) {
			t.Fatalf("round %d hash: redis % x\nours % x", round, blob, []byte(hp))
		}

		// A set of integers.
		is := NewIntset(nil)
		for range 1 + r.IntN(100) {
			v := r.Int64N(1<<uint(8+r.IntN(50))) - 1<<uint(r.IntN(40))
			c.SAdd(ctx, "s", v)
			is, _ = is.Add(v)
		}
		d, err = c.Dump(ctx, "s").Bytes()
		if err != nil {
			t.Fatal(err)
		}
		if d[0] != 11 { // RDB_TYPE_SET_INTSET
			t.Fatalf("set type %d", d[0])
		}
		if blob, _ = rdbString(t, d[1:]); !bytes.Equal(blob, is) {
			t.Fatalf("round %d intset: redis % x\nours % x", round, blob, []byte(is))
		}
	}
}
