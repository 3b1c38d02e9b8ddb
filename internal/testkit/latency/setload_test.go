package latency

import (
	"bufio"
	"net"
	"testing"
	"time"
)

// TestSetLoadCountsEveryAnsweredSet runs SetLoad against a listener that
// answers each SET with +OK and checks the count, the recorded samples and
// the requests' shape agree.
func TestSetLoadCountsEveryAnsweredSet(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	served := make(chan int64, 2)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				r := bufio.NewReader(conn)
				var n int64
				defer func() { served <- n }()
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if line != "*3\r\n" {
						t.Errorf("request starts %q, want *3", line)
						return
					}
					for range 6 { // $3 SET $len key $16 value
						if _, err := r.ReadString('\n'); err != nil {
							return
						}
					}
					if _, err := conn.Write([]byte("+OK\r\n")); err != nil {
						return
					}
					n++
				}
			}()
		}
	}()
	ops, rec := SetLoad(t, "tcp", ln.Addr().String(), 2, 100*time.Millisecond)
	if ops == 0 || rec.Summary().Count != ops {
		t.Fatalf("SetLoad did %d SETs and recorded %d samples; want the same, above 0", ops, rec.Summary().Count)
	}
	var got int64
	for range 2 {
		select {
		case n := <-served:
			got += n
		case <-time.After(5 * time.Second):
			t.Fatal("a SetLoad client never closed its connection")
		}
	}
	if got != ops {
		t.Fatalf("the server answered %d SETs, SetLoad counted %d", got, ops)
	}
}
