package member_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// BenchmarkReshard measures how fast redis-cli --cluster reshard moves
// slots between goblin and redis-server nodes, in the four directions,
// in one cluster and one run: two redis-server 7.0 masters and two goblin
// masters (a quarter of the slots each, cluster-node-timeout 15000), 3,000
// keys over every slot (as TestMigrationWalk), then RESHARD_SLOTS slots
// (100 by default) moved redis→redis, redis→goblin, goblin→goblin and
// goblin→redis, twice over, alternated, timed per slot (between redis-cli's
// successive "Moving slot" lines). redis-cli moves a slot with
// SETSLOT IMPORTING on the target, SETSLOT MIGRATING on the source,
// GETKEYSINSLOT and MIGRATE until the slot is empty, then SETSLOT NODE on
// every master; so it also times, on each kind, the round trip of those
// commands alone (SETSLOT IMPORTING then STABLE of a slot the node does
// not own, and SETSLOT NODE of a slot to its owner), 200 of each.
func BenchmarkReshard(b *testing.B) {
	slots := 100
	if v := os.Getenv("RESHARD_SLOTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			b.Fatalf("RESHARD_SLOTS=%q: want 1 to 1000", v)
		}
		slots = n
	}
	for range b.N {
		reshardSpeeds(b, slots)
	}
}

func reshardSpeeds(b *testing.B, slots int) {
	ctx := context.Background()
	timeout := []string{"--cluster-node-timeout", "15000"}
	reds := startHANodesOf(b, "redis", 2, timeout...)
	gobs := startHANodesOf(b, "goblin", 2, timeout...)
	all := []*haNode{reds[0], reds[1], gobs[0], gobs[1]}
	name := map[*haNode]string{reds[0]: "redis0", reds[1]: "redis1", gobs[0]: "goblin0", gobs[1]: "goblin1"}
	var addrs []string
	for i, x := range all {
		if err := x.c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", i*4096, (i+1)*4096-1).Err(); err != nil {
			b.Fatal(err)
		}
		if err := x.c.Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", i+1).Err(); err != nil {
			b.Fatal(err)
		}
		addrs = append(addrs, x.addr)
	}
	for _, x := range all[1:] {
		if err := all[0].c.Do(ctx, "CLUSTER", "MEET", "127.0.0.1", x.port, x.busPort).Err(); err != nil {
			b.Fatal(err)
		}
	}
	checkCleanAt(b, all[0].addr, 120*time.Second)
	waitStateOK(b, 60*time.Second, addrs...)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, MaxRedirects: 16})
	defer cc.Close()
	for i := range 3000 {
		if err := cc.Set(ctx, "reshard:"+strconv.Itoa(i), i, 0).Err(); err != nil {
			b.Fatalf("SET reshard:%d: %v", i, err)
		}
	}

	// The commands of a slot move, alone, on each kind.
	fmt.Printf("round trip of one command, median (p90) of 200, on a node of the 4-node cluster:\n")
	for _, x := range []*haNode{reds[0], gobs[0]} {
		other := reds[1]
		if x == reds[0] {
			other = gobs[1]
		}
		foreign := strconv.Itoa(slices.Index(all, other)*4096 + 4095) // a slot of other, not moved below
		own := strconv.Itoa(slices.Index(all, x)*4096 + 4095)
		imp := timeCommand(b, x, 200, func() error {
			if err := x.c.Do(ctx, "CLUSTER", "SETSLOT", foreign, "IMPORTING", other.id).Err(); err != nil {
				return err
			}
			return x.c.Do(ctx, "CLUSTER", "SETSLOT", foreign, "STABLE").Err()
		})
		node := timeCommand(b, x, 200, func() error { return x.c.Do(ctx, "CLUSTER", "SETSLOT", own, "NODE", x.id).Err() })
		ping := timeCommand(b, x, 200, func() error { return x.c.Ping(ctx).Err() })
		fmt.Printf("  %-7s SETSLOT IMPORTING+STABLE %6.2f ms (%6.2f)  SETSLOT NODE (owner) %6.2f ms (%6.2f)  PING %6.2f ms (%6.2f)\n",
			strings.TrimSuffix(name[x], "0"), imp[0], imp[1], node[0], node[1], ping[0], ping[1])
	}

	moves := []struct{ from, to *haNode }{{reds[0], reds[1]}, {reds[0], gobs[0]}, {gobs[0], gobs[1]}, {gobs[0], reds[1]}}
	took := make([][]time.Duration, len(moves))
	gaps := make([][]time.Duration, len(moves))
	for range 2 {
		for i, m := range moves {
			t0 := time.Now()
			g, out, err := reshardTimed(b, m.to.addr, m.from.id, m.to.id, slots)
			took[i] = append(took[i], time.Since(t0))
			gaps[i] = append(gaps[i], g...)
			if err != nil || strings.Contains(out, "[ERR]") {
				b.Fatalf("redis-cli --cluster reshard %s → %s: %v\n%s", name[m.from], name[m.to], err, lastLines(out, 30))
			}
			checkCleanAt(b, m.to.addr, 120*time.Second)
		}
	}
	fmt.Printf("redis-cli --cluster reshard of %d slots (3,000 keys over 16,384 slots), 2 rounds alternated;\n"+
		"time from one slot's \"Moving slot\" line to the next (median robust to the machine's stalls):\n", slots)
	for i, m := range moves {
		slices.Sort(gaps[i])
		med, p90 := gaps[i][len(gaps[i])/2], gaps[i][len(gaps[i])*9/10]
		fmt.Printf("  %-8s → %-8s runs %7.0f ms, %7.0f ms   per slot median %5.2f ms (p90 %5.2f) = %4.0f slots/s\n", name[m.from], name[m.to],
			ms(took[i][0]), ms(took[i][1]), ms(med), ms(p90), float64(time.Second)/float64(med))
		b.ReportMetric(ms(med), strings.TrimRight(name[m.from], "01")+"-to-"+strings.TrimRight(name[m.to], "01")+"-ms/slot")
	}
}

// reshardTimed runs redis-cli --cluster reshard of slots slots from
// fromID to toID through addr and returns the times between its
// successive "Moving slot" lines (one slot moved each), and its output.
func reshardTimed(b *testing.B, addr, fromID, toID string, slots int) ([]time.Duration, string, error) {
	b.Helper()
	bin := testkit.Need(b, "redis-cli", "redis-cli --cluster reshard")
	cmd := exec.Command(bin, "--cluster", "reshard", addr, "--cluster-from", fromID, "--cluster-to", toID,
		"--cluster-slots", strconv.Itoa(slots), "--cluster-yes")
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	timer := time.AfterFunc(3*time.Minute, func() { cmd.Process.Kill() })
	defer timer.Stop()
	var out strings.Builder
	var gaps []time.Duration
	var last time.Time
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "Moving slot ") {
			now := time.Now()
			if !last.IsZero() {
				gaps = append(gaps, now.Sub(last))
			}
			last = now
		}
	}
	err = cmd.Wait()
	if len(gaps) == 0 && err == nil {
		err = fmt.Errorf("redis-cli printed no slot moves")
	}
	return gaps, out.String(), err
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// timeCommand runs do n times on x and returns the median and p90 round
// trip in milliseconds.
func timeCommand(b *testing.B, x *haNode, n int, do func() error) [2]float64 {
	b.Helper()
	lat := make([]time.Duration, n)
	for i := range n {
		t0 := time.Now()
		if err := do(); err != nil {
			b.Fatalf("%s: %v", x.addr, err)
		}
		lat[i] = time.Since(t0)
	}
	slices.Sort(lat)
	return [2]float64{ms(lat[n/2]), ms(lat[n*9/10])}
}
