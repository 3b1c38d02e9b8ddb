package member_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestAllowReadsWhenDown: a node owning slot 0 only (cluster_state:fail:
// the other slots are unassigned) answers keyed commands on its own slot
// as redis-server 7.0 does, with cluster-allow-reads-when-down no (every
// keyed command: -CLUSTERDOWN The cluster is down) and yes (GET served,
// SET refused with -CLUSTERDOWN ... only accepts read commands): the same
// reply from both servers for each command.
func TestAllowReadsWhenDown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, allow := range []string{"no", "yes"} {
		t.Run(allow, func(t *testing.T) {
			g := startHANodesOf(t, "goblin", 1, "--cluster-allow-reads-when-down", allow)[0]
			r := startHANodesOf(t, "redis", 1, "--cluster-allow-reads-when-down", allow)[0]
			reply := func(x *haNode, args ...any) string {
				v, err := x.c.Do(ctx, args...).Result()
				if err == redis.Nil {
					return "(nil)"
				}
				if err != nil {
					return "error: " + err.Error()
				}
				return fmt.Sprint("value: ", v)
			}
			for _, x := range []*haNode{g, r} {
				if v := reply(x, "CLUSTER", "ADDSLOTS", 0); v != "value: OK" {
					t.Fatalf("ADDSLOTS 0: %s", v)
				}
				if info := reply(x, "CLUSTER", "INFO"); !strings.Contains(info, "cluster_state:fail") {
					t.Fatalf("a node owning one slot: %s", info)
				}
			}
			// "{06S}" hashes to slot 0.
			// SPUBLISH: shard channels are served while down either way
			// (cluster-allow-pubsubshard-when-down yes, the default).
			cmds := [][]any{{"GET", "{06S}a"}, {"SET", "{06S}a", "1"}, {"EXISTS", "{06S}a"}, {"INCR", "{06S}b"}, {"STRLEN", "{06S}a"},
				{"SPUBLISH", "{06S}c", "m"}}
			served := 0
			for _, c := range cmds {
				gv, rv := reply(g, c...), reply(r, c...)
				if gv != rv {
					t.Errorf("cluster-allow-reads-when-down %s, %v: goblin %q, redis-server %q", allow, c, gv, rv)
				}
				if gv[:5] != "error" {
					served++
				}
			}
			if want := map[string]int{"no": 1, "yes": 4}[allow]; served != want {
				t.Errorf("cluster-allow-reads-when-down %s: %d of the commands served, want %d", allow, served, want)
			}
		})
	}
}
