package uds

import (
	"errors"
	"net"
	"testing"
	"time"
)

// TestRelisten: a TLS listener moved to another port accepts there, no
// longer on the old one, and keeps the client connected before; closed
// (Relisten("")) it accepts nowhere and still serves that client; a port
// another socket holds is refused and changes nothing.
func TestRelisten(t *testing.T) {
	f := writeCerts(t, t.TempDir(), "")
	l := startTLS(t, f, TLSOptions{})
	cc := clientTLS(t, ClientTLSFiles{CACert: f.CACert, Cert: f.ClientCert, Key: f.ClientKey})
	before, err := dialTLS(t, l, cc)
	if err != nil {
		t.Fatal(err)
	}
	old := l.s.Addr()

	var rerr error
	l.do(func() { rerr = l.s.Relisten("127.0.0.1:0") })
	if rerr != nil {
		t.Fatal(rerr)
	}
	if l.s.Addr() == old {
		t.Fatalf("address after Relisten: %s, the old one", old)
	}
	if c, err := net.DialTimeout("tcp", old, time.Second); err == nil {
		c.Close()
		t.Fatalf("the old address %s still accepts", old)
	}
	moved, err := dialTLS(t, l, cc)
	if err != nil {
		t.Fatalf("dial at the new address %s: %v", l.s.Addr(), err)
	}
	for _, c := range []*Conn{before, moved} {
		if got, err := tlsLine(c, "hi"); err != nil || got != "+hi\r\n" {
			t.Fatalf("a client after the move: %q, %v", got, err)
		}
	}

	// A port in use: refused, the listener stays where it was.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	here := l.s.Addr()
	l.do(func() { rerr = l.s.Relisten(busy.Addr().String()) })
	if !errors.Is(rerr, ErrAddrInUse) {
		t.Fatalf("Relisten on a port in use: %v, want ErrAddrInUse", rerr)
	}
	if l.s.Addr() != here {
		t.Fatalf("after a refused Relisten the address is %s, want %s", l.s.Addr(), here)
	}
	if _, err := dialTLS(t, l, cc); err != nil {
		t.Fatalf("after a refused Relisten: %v", err)
	}

	// Closed: nothing accepts, the clients stay.
	var listening bool
	l.do(func() { rerr = l.s.Relisten(""); listening = l.s.Listening() })
	if rerr != nil || listening {
		t.Fatalf("Relisten(\"\"): %v, listening %v", rerr, listening)
	}
	if c, err := net.DialTimeout("tcp", here, time.Second); err == nil {
		c.Close()
		t.Fatalf("%s accepts after the listener closed", here)
	}
	if got, err := tlsLine(moved, "still"); err != nil || got != "+still\r\n" {
		t.Fatalf("a client after the listener closed: %q, %v", got, err)
	}
	l.do(func() { rerr = l.s.Relisten("127.0.0.1:0"); listening = l.s.Listening() })
	if rerr != nil || !listening {
		t.Fatalf("Relisten after close: %v, listening %v", rerr, listening)
	}
	if _, err := dialTLS(t, l, cc); err != nil {
		t.Fatalf("after listening again: %v", err)
	}
}
