package member_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// TestLostSlotKeysDeleted: a goblin master and a redis-server 7.0 master
// share the slots. Each in turn takes one slot of the other without
// consensus (CLUSTER SETSLOT s NODE myself, then BUMPEPOCH): the loser
// sees the slot claimed with a newer config epoch, gives it up, stays a
// master of its other slots and deletes the keys it held in the lost
// slot, as Redis's delKeysInSlot (redis-server losing a slot to goblin
// is the reference; goblin losing one to redis-server is the check).
// Keys of other slots stay.
func TestLostSlotKeysDeleted(t *testing.T) {
	t.Parallel()
	g, r := startGoblin(t), startRedis(t)
	g.do(t, "CLUSTER", "ADDSLOTSRANGE", 0, 8191)
	r.do(t, "CLUSTER", "ADDSLOTSRANGE", 8192, 16383)
	g.meet(t, r)
	gid, rid := g.id(t), r.id(t)
	testkit.Eventually(t, 20*time.Second, "goblin and redis-server each listing the other as a connected master", func() (bool, string) {
		ok1, s1 := sees(g, rid, "master")
		ok2, s2 := sees(r, gid, "master")
		return ok1 && ok2, s1 + " | " + s2
	})
	ctx := context.Background()
	for _, c := range []struct {
		name          string
		loser, winner *node
		winnerID      string
	}{{"redis-server loses a slot to goblin", r, g, gid}, {"goblin loses a slot to redis-server", g, r, rid}} {
		t.Run(strings.ReplaceAll(c.name, " ", "-"), func(t *testing.T) {
			testkit.Eventually(t, 20*time.Second, "cluster_state:ok on both", func() (bool, string) {
				a, _ := g.c.ClusterInfo(ctx).Result()
				b, _ := r.c.ClusterInfo(ctx).Result()
				return strings.Contains(a, "cluster_state:ok") && strings.Contains(b, "cluster_state:ok"), a + b
			})
			tag := keyOn(t, c.loser, "lost")
			other := keyOn(t, c.loser, "kept")
			slot := int(c.loser.c.ClusterKeySlot(ctx, tag).Val())
			if int(c.loser.c.ClusterKeySlot(ctx, other).Val()) == slot {
				other = keyOn(t, c.loser, "kept2-")
			}
			for i := range 20 {
				if err := c.loser.c.Set(ctx, "{"+tag+"}:"+strconv.Itoa(i), i, 0).Err(); err != nil {
					t.Fatalf("SET in the slot to lose: %v", err)
				}
			}
			before := c.loser.c.ClusterCountKeysInSlot(ctx, slot).Val()
			if before != 21 {
				t.Fatalf("COUNTKEYSINSLOT %d on the loser: %d, want 21", slot, before)
			}
			size := c.loser.c.DBSize(ctx).Val()
			c.winner.do(t, "CLUSTER", "SETSLOT", slot, "NODE", c.winnerID)
			c.winner.do(t, "CLUSTER", "BUMPEPOCH")
			testkit.Eventually(t, 20*time.Second, "the loser giving up slot "+strconv.Itoa(slot)+" and deleting its keys", func() (bool, string) {
				n, err := c.loser.c.ClusterCountKeysInSlot(ctx, slot).Result()
				err2 := c.loser.c.Get(ctx, tag).Err()
				moved := err2 != nil && strings.HasPrefix(err2.Error(), "MOVED "+strconv.Itoa(slot)+" ")
				return err == nil && n == 0 && moved, "keys " + strconv.FormatInt(n, 10) + ", GET: " + errText(err2)
			})
			if got := c.loser.c.DBSize(ctx).Val(); got != size-21 {
				t.Errorf("DBSIZE on the loser %d, want %d (only the lost slot's 21 keys gone)", got, size-21)
			}
			if v, err := c.loser.c.Get(ctx, other).Result(); err != nil || v != "x" {
				t.Errorf("a key of a kept slot on the loser: %q %v", v, err)
			}
			id := c.loser.id(t)
			if f := strings.Fields(c.loser.line(id)); len(f) < 3 || !strings.Contains(f[2], "master") || countSlots(c.loser.line(id)) == 0 {
				t.Errorf("the loser is no longer a master with slots: %s", c.loser.line(id))
			}
		})
	}
}
