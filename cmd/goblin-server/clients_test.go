package main

// CLIENT LIST, CLIENT KILL and MONITOR against the real server: they need
// the socket transports' connections (addresses, closing another client,
// writing to a client out of turn).

import (
	"bufio"
	"context"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestClientListKillAndMonitor(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx := context.Background()
	for _, ep := range []struct{ name, network, addr string }{{"unix", "unix", s.sock}, {"tcp", "tcp", s.tcp}} {
		t.Run(ep.name, func(t *testing.T) {
			// The monitor: a raw connection, which reads the feed line by line.
			mc, err := net.Dial(ep.network, ep.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer mc.Close()
			_ = mc.SetDeadline(time.Now().Add(30 * time.Second))
			feed := bufio.NewReader(mc)
			if _, err := mc.Write([]byte("MONITOR\r\n")); err != nil {
				t.Fatal(err)
			}
			if l, err := feed.ReadString('\n'); err != nil || l != "+OK\r\n" {
				t.Fatalf("MONITOR: %q, %v", l, err)
			}

			victim := redis.NewClient(&redis.Options{Network: ep.network, Addr: ep.addr, PoolSize: 1, ClientName: "victim-" + ep.name})
			defer victim.Close()
			if err := victim.Set(ctx, "mon\x01key", "v a\"l", 0).Err(); err != nil {
				t.Fatal(err)
			}
			admin := redis.NewClient(&redis.Options{Network: ep.network, Addr: ep.addr, PoolSize: 1})
			defer admin.Close()
			list, err := admin.ClientList(ctx).Result()
			if err != nil {
				t.Fatal(err)
			}
			addrWant := `127\.0\.0\.1:\d+ laddr=` + regexp.QuoteMeta(s.tcp)
			flags := "N"
			if ep.network == "unix" {
				addrWant = regexp.QuoteMeta(s.sock+":0") + " laddr=" + regexp.QuoteMeta(s.sock+":0")
				flags = "U"
			}
			line := regexp.MustCompile(`(?m)^id=(\d+) addr=` + addrWant + ` fd=\d+ name=victim-` + ep.name + ` age=\d+ idle=\d+ flags=` + flags + ` db=0 .* cmd=set .*resp=3`).FindStringSubmatch(list)
			if line == nil {
				t.Fatalf("no line for the victim in CLIENT LIST:\n%s", list)
			}
			if !regexp.MustCompile(`(?m) flags=O` + strings.TrimSuffix(flags, "N") + ` `).MatchString(list) {
				t.Fatalf("no monitor in CLIENT LIST:\n%s", list)
			}
			if !regexp.MustCompile(`(?m) cmd=client\|list `).MatchString(list) {
				t.Fatalf("the caller's line does not show client|list:\n%s", list)
			}

			// The feed shows the victim's SET (go-redis sends names in lower
			// case), quoted as Redis quotes, and not the admin's CLIENT LIST.
			peer := `127\.0\.0\.1:\d+`
			if ep.network == "unix" {
				peer = regexp.QuoteMeta("unix:" + s.sock)
			}
			want := regexp.MustCompile(`^\+\d+\.\d{6} \[0 ` + peer + `\] "set" "mon\\x01key" "v a\\"l"\r\n$`)
			for {
				l, err := feed.ReadString('\n')
				if err != nil {
					t.Fatal(err)
				}
				if want.MatchString(l) {
					break
				}
				if strings.Contains(l, "client") && strings.Contains(l, "list") {
					t.Fatalf("admin command in the feed: %q", l)
				}
			}

			// CLIENT KILL ID closes the victim's connection.
			if n, err := admin.ClientKillByFilter(ctx, "ID", line[1]).Result(); err != nil || n != 1 {
				t.Fatalf("CLIENT KILL ID %s = %d, %v", line[1], n, err)
			}
			if n, err := admin.ClientKillByFilter(ctx, "ID", line[1]).Result(); err != nil || n != 0 {
				t.Fatalf("second CLIENT KILL ID %s = %d, %v", line[1], n, err)
			}
			list, err = admin.ClientList(ctx).Result()
			if err != nil || strings.Contains(list, "victim") {
				t.Fatalf("the victim is still listed (%v):\n%s", err, list)
			}
		})
	}
}
