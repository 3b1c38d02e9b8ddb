package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// TestAeronFailoverLAN: a primary and three replicas, each in its own
// namespace on a bridged LAN, every node started with a publication of
// its own (--repl-aeron-channel, which stands by while the node follows a
// primary) and the replicas following the primary's stream (MDC, and
// multicast on one group). The primary is SIGKILLed; replica 1 is
// promoted (REPLICAOF NO ONE) and starts publishing; replicas 2 and 3 are
// pointed at it (REPLICAOF) and resubscribe to its stream. Then, after
// writes on the new primary: replicas 2 and 3 follow its Aeron stream (on
// a channel naming it, for MDC), hold its data key by key and the seq
// model list exactly, and the new primary lists both at its offset. While
// they followed the old primary, the replicas' own publications sent
// nothing (their standby is logged).
func TestAeronFailoverLAN(t *testing.T) {
	t.Parallel() // its own namespaces, processes and directories; it times nothing
	for _, mode := range []string{"mdc", "multicast"} {
		t.Run(mode, func(t *testing.T) { aeronFailoverRun(t, mode) })
	}
}

func aeronFailoverRun(t *testing.T, mode string) {
	ctx := context.Background()
	a := newAeronLAN(t, 3, nil)
	addr := func(h int) string { return a.lan.Addr[h].String() }
	group := fmt.Sprintf("239.255.%d.%d", 1+rand.IntN(250), 1+2*rand.IntN(120))
	pubCh := func(h int) string {
		if mode == "mdc" {
			return fmt.Sprintf("aeron:udp?control-mode=dynamic|control=%s:40457", addr(h))
		}
		return fmt.Sprintf("aeron:udp?endpoint=%s:40456|interface=%s", group, addr(h))
	}
	subCh := func(h int) string {
		if mode == "mdc" {
			return fmt.Sprintf("aeron:udp?endpoint=%s:40456|control=%s:40457|control-mode=dynamic", addr(h), addr(0))
		}
		return pubCh(h)
	}
	own := func(h int) []string {
		return []string{"--repl-aeron-channel", pubCh(h), "--repl-aeron-status-channel", fmt.Sprintf("aeron:udp?endpoint=%s:40458", addr(h))}
	}
	a.primary = a.start(t, 0, own(0)...)
	pc := a.primary.c
	rng := rand.New(rand.NewPCG(5, 6))
	const per = 500
	seqWrites(t, pc, rng, 0, per)
	seq := per
	for h := 1; h <= 3; h++ {
		args := append(own(h), "--replicaof", strings.Replace(a.primary.tcp, ":", " ", 1),
			"--replica-aeron-channel", subCh(h), "--replica-aeron-status-channel", fmt.Sprintf("aeron:udp?endpoint=%s:40458", addr(0)),
			"--replica-aeron-name", fmt.Sprintf("host%d", h))
		a.replicas = append(a.replicas, a.start(t, h, args...))
	}
	for _, r := range a.replicas {
		aeronLive(t, r.c)
	}
	seqWrites(t, pc, rng, seq, per)
	seq += per
	want := infoInt(t, pc, "replication", "master_repl_offset")
	for i, r := range a.replicas {
		testkit.Eventually(t, 60*time.Second, fmt.Sprintf("replica %d to reach the old primary's offset %d", i+1, want), func() (bool, string) {
			got := infoInt(t, r.c, "replication", "slave_repl_offset")
			return got >= want, fmt.Sprintf("at %d", got)
		})
		if !strings.Contains(r.p.Log(), "the publication stands by") {
			t.Errorf("replica %d: its publication did not stand by while it followed a primary", i+1)
		}
	}

	// The primary fails; replica 1 is promoted, 2 and 3 follow it.
	a.primary.p.Signal(syscall.SIGKILL)
	a.primary.p.Wait(10 * time.Second)
	// A killed server leaves its media drivers' directories behind.
	for _, m := range regexp.MustCompile(`aeron_dir=(\S+)`).FindAllStringSubmatch(a.primary.p.Log(), -1) {
		os.RemoveAll(m[1])
	}
	r1 := a.replicas[0]
	if err := r1.c.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatalf("REPLICAOF NO ONE on replica 1: %v", err)
	}
	host, port, _ := strings.Cut(r1.tcp, ":")
	for i, r := range a.replicas[1:] {
		if err := r.c.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
			t.Fatalf("REPLICAOF %s %s on replica %d: %v", host, port, i+2, err)
		}
	}
	nc := r1.c
	seqWrites(t, nc, rng, seq, 2*per)
	seq += 2 * per
	want = infoInt(t, nc, "replication", "master_repl_offset")
	for i, r := range a.replicas[1:] {
		name := fmt.Sprintf("replica %d", i+2)
		testkit.Eventually(t, 90*time.Second, fmt.Sprintf("%s to follow the new primary's Aeron stream up to its offset %d", name, want), func() (bool, string) {
			got := infoInt(t, r.c, "replication", "slave_repl_offset")
			link := infoField(t, r.c, "replication", "aeron_link")
			ch := infoField(t, r.c, "replication", "aeron_channel")
			ok := got >= want && link == "aeron"
			if mode == "mdc" {
				ok = ok && strings.Contains(ch, "control="+addr(1)+":40457")
			}
			return ok, fmt.Sprintf("at %d, aeron_link:%s aeron_channel:%s; log: %s", got, link, ch, strings.Join(grepLog(r.p.Log(), "primary"), "\n"))
		})
		sameData(t, nc, r.c)
		checkSeq(t, name, r.c, seq)
	}
	testkit.Eventually(t, 20*time.Second, "the new primary to list replicas 2 and 3 at its offset", func() (bool, string) {
		info, _ := nc.Info(ctx, "replication").Result()
		cur := infoInt(t, nc, "replication", "master_repl_offset")
		return infoInt(t, nc, "replication", "aeron_connected_replicas") == 2 &&
			strings.Count(info, fmt.Sprintf("offset=%d,lag_bytes=0", cur)) == 2, info
	})
	if n := infoInt(t, nc, "replication", "aeron_published_offset"); n < want {
		t.Errorf("the new primary's aeron_published_offset is %d, want at least %d: it did not publish its stream", n, want)
	}
	info, _ := nc.Info(ctx, "replication").Result()
	t.Logf("new primary: %s", strings.Join(grepLines(info, "aeron_"), " "))
}

// grepLog returns the last 20 lines of log holding s.
func grepLog(log, s string) []string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out[max(0, len(out)-20):]
}
