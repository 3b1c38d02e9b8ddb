package cluster

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/proto/resp"
)

// TestMigratorSend: replies are read back per command (errors by text),
// the connection is kept for the next call, and a target that does not
// answer in time is an ErrMigrate, not a hang.
func TestMigratorSend(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			go func() {
				buf := make([]byte, 4096)
				var in []byte
				for {
					n, err := c.Read(buf)
					if err != nil {
						return
					}
					in = append(in, buf[:n]...)
					for {
						args, used, err := resp.ReadCommand(in, nil, nil)
						if err != nil || used == 0 {
							break
						}
						in = in[used:]
						switch string(args[0]) {
						case "RESTORE":
							c.Write([]byte("+OK\r\n"))
						case "SLOW":
							// never answers
						default:
							c.Write([]byte("-BUSYKEY Target key name already exists.\r\n"))
						}
					}
				}
			}()
		}
	}()
	var m Migrator
	defer m.Close()
	cmds := resp.AppendCommandString(nil, "RESTORE", "a", "0", "p")
	cmds = resp.AppendCommandString(cmds, "OTHER", "b")
	got, err := m.Send(ln.Addr().String(), 5*time.Second, cmds, 2)
	if err != nil || len(got) != 2 || got[0] != "" || got[1] != "BUSYKEY Target key name already exists." {
		t.Fatalf("Send: %q, %v", got, err)
	}
	if _, err := m.Send(ln.Addr().String(), 5*time.Second, resp.AppendCommandString(nil, "RESTORE", "c", "0", "p"), 1); err != nil {
		t.Fatal(err)
	}
	if len(accepted) != 1 {
		t.Fatalf("%d connections for two calls, want one kept", len(accepted))
	}
	start := time.Now()
	_, err = m.Send(ln.Addr().String(), 200*time.Millisecond, resp.AppendCommandString(nil, "SLOW"), 1)
	if !errors.Is(err, ErrMigrate) {
		t.Fatalf("a silent target: %v", err)
	}
	if time.Since(start) > 30*time.Second {
		t.Fatalf("the timeout was not kept: %v", time.Since(start))
	}
	if _, err := m.Send("127.0.0.1:1", time.Second, cmds, 2); !errors.Is(err, ErrMigrate) {
		t.Fatalf("an unreachable target: %v", err)
	}
}
