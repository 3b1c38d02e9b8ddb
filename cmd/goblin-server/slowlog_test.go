package main

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/proto/resp"
)

// TestSlowlogClientAddress: on a real goblin-server started with
// --slowlog-log-slower-than 0 every command is logged, and an entry names
// the TCP client's address (as the client sees its own end) and its
// CLIENT SETNAME name, as Redis's SLOWLOG GET does.
func TestSlowlogClientAddress(t *testing.T) {
	t.Parallel() // its own processes, sockets and directories; it times nothing
	s := startServer(t, "--slowlog-log-slower-than", "0", "--slowlog-max-len", "5")
	c, err := net.Dial("tcp", s.tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var in []byte
	for _, cmd := range [][]string{{"CLIENT", "SETNAME", "probe"}, {"SET", "k", "v"}, {"SLOWLOG", "GET", "1"}} {
		in = resp.AppendCommandString(in, cmd...)
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write(in); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	var lines []string
	for len(lines) < 2+16 { // +OK, +OK, then the entry: *1 *6 :id :time :us *3 $3 SET $1 k $1 v $n addr $5 probe
		l, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("after %q: %v", lines, err)
		}
		lines = append(lines, strings.TrimSuffix(l, "\r\n"))
	}
	got := strings.Join(lines, " ")
	want := "$3 SET $1 k $1 v $" + strconv.Itoa(len(c.LocalAddr().String())) + " " + c.LocalAddr().String() + " $5 probe"
	if !strings.HasPrefix(got, "+OK +OK *1 *6 :") || !strings.HasSuffix(got, want) {
		t.Fatalf("SLOWLOG GET 1: %q\nwant it to end %q", got, want)
	}
}
