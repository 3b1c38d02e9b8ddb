package collection

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

func TestAppendScore(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
	}{
		{1, "1"}, {-3, "-3"}, {2.5, "2.5"}, {0.1, "0.10000000000000001"}, {math.Inf(1), "inf"},
		{math.Inf(-1), "-inf"}, {math.Copysign(0, -1), "0"}, {4503599627370495, "4503599627370495"},
		{4503599627370496, "4503599627370496"}, {1e300, "1.0000000000000001e+300"},
		// LLONG_MAX/2 converts to 2^62 in C's comparison too: 2^62 is written as an
		// integer, the next double up is not.
		{4611686018427387904, "4611686018427387904"}, {4611686018427388928, "4.6116860184273889e+18"},
	} {
		if got := string(AppendScore(nil, c.f)); got != c.want {
			t.Errorf("AppendScore(%v) = %q, want %q", c.f, got, c.want)
		}
	}
}

// Sorted sets built by ZADD in redis-server 7.0 and by ZsetInsert are the same
// listpack, byte for byte, and ZsetRank agrees with the model's order.
func TestRedisBuildsTheSameZsetListpack(t *testing.T) {
	bin := testkit.Need(t, "redis-server", "the sorted-set listpack bytes Redis writes")
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	testproc.Start(t, bin, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--dir", dir,
		"--rdbcompression", "no")
	testproc.WaitDial(t, "unix", sock, 30*time.Second)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: 1, Protocol: 2})
	defer c.Close()
	r := rand.New(rand.NewPCG(11, 12))
	score := func() float64 {
		switch r.IntN(7) {
		case 6:
			edges := []float64{4611686018427387904, 4611686018427388928, -4611686018427387904, -4611686018427388928,
				math.Copysign(0, -1), 1e300, 5e-324, math.MaxFloat64}
			return edges[r.IntN(len(edges))]
		case 0:
			return float64(r.IntN(10))
		case 1:
			return r.Float64() * 100
		case 2:
			return math.Inf(2*r.IntN(2) - 1)
		case 3:
			return float64(int64(r.Uint64() >> 8))
		case 4:
			return -r.ExpFloat64() * 1e20
		}
		return float64(r.IntN(5)) + 0.5
	}
	for round := range 60 {
		c.Del(ctx, "z")
		lp := NewListpack(nil)
		type el struct {
			m string
			s float64
		}
		var model []el
		seen := map[string]bool{}
		for range 1 + r.IntN(100) {
			m := strconv.Itoa(r.IntN(300))
			if r.IntN(2) == 0 {
				m = "m" + m
			}
			if seen[m] {
				continue
			}
			seen[m] = true
			s := score()
			if err := c.ZAdd(ctx, "z", redis.Z{Score: s, Member: m}).Err(); err != nil {
				t.Fatal(err)
			}
			lp = lp.ZsetInsert([]byte(m), s)
			model = append(model, el{m, s})
		}
		d, err := c.Dump(ctx, "z").Bytes()
		if err != nil {
			t.Fatal(err)
		}
		if d[0] != 17 { // RDB_TYPE_ZSET_LISTPACK
			t.Fatalf("zset type %d", d[0])
		}
		if blob, _ := rdbString(t, d[1:]); !bytes.Equal(blob, lp) {
			var theirs, ours []string
			for p := Listpack(blob).First(); p >= 0; p = Listpack(blob).Next(p) {
				theirs = append(theirs, string(Listpack(blob).AppendValue(nil, p)))
			}
			for p := lp.First(); p >= 0; p = lp.Next(p) {
				ours = append(ours, string(lp.AppendValue(nil, p)))
			}
			t.Fatalf("round %d: redis %q\nours  %q", round, theirs, ours)
		}
		sort.Slice(model, func(i, j int) bool {
			return zless(model[i].s, []byte(model[i].m), model[j].s, []byte(model[j].m))
		})
		for i, e := range model {
			if rank, s := lp.ZsetRank([]byte(e.m)); rank != i || s != e.s {
				t.Fatalf("ZsetRank(%q) = %d %v, model %d %v", e.m, rank, s, i, e.s)
			}
		}
	}
}
