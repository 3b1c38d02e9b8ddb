package forward

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/engine"
)

// fakePrimary answers SELECT and writes with +OK and ROLE with a master's
// offset 0, as many connections as come.
func fakePrimary(t *testing.T) (string, int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil || !strings.HasPrefix(line, "*") {
						return
					}
					n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
					var name string
					for i := range n {
						if _, err := r.ReadString('\n'); err != nil { // $len
							return
						}
						w, err := r.ReadString('\n')
						if err != nil {
							return
						}
						if i == 0 {
							name = strings.ToUpper(strings.TrimSpace(w))
						}
					}
					reply := "+OK\r\n"
					if name == "ROLE" {
						reply = "*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n"
					}
					if _, err := c.Write([]byte(reply)); err != nil {
						return
					}
				}
			}()
		}
	}()
	a := ln.Addr().(*net.TCPAddr)
	return a.IP.String(), a.Port
}

// TestDoorbellClearedAfterAnswers: once every forwarded write is answered,
// the doorbell the loop parks on is not left readable, even when Poll took
// a result before its connection goroutine rang (the loop would otherwise
// wake at once from every park until the next forwarded write).
func TestDoorbellClearedAfterAnswers(t *testing.T) {
	host, port := fakePrimary(t)
	answered := 0
	f, err := New(Options{
		Primary: func() (string, int, bool) { return host, port, true },
		Applied: func() int64 { return 0 },
		Done:    func(*engine.Session, uint64, []byte) { answered++ },
		Timeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n")
	for i := range 50 {
		if !f.Forward(nil, uint64(i+1), 0, false, cmd) {
			t.Fatalf("write %d not taken", i)
		}
		deadline := time.Now().Add(5 * time.Second)
		for answered <= i {
			if time.Now().After(deadline) {
				t.Fatalf("write %d never answered", i)
			}
			f.Poll(time.Now().UnixNano())
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		f.Poll(time.Now().UnixNano())
		fds := []unix.PollFd{{Fd: int32(f.WaitFD()), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the doorbell stayed readable 5 s after all %d writes were answered (owed %d)", answered, f.owed)
		}
		time.Sleep(time.Millisecond)
	}
	if !f.Dormant() {
		t.Fatal("the forwarder is not dormant with nothing in flight")
	}
}
