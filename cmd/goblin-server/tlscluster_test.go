package main

import (
	"context"
	"crypto/tls"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testcerts"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
	"github.com/goblin-kv/goblin/transport/uds"
)

// busNode is one cluster node of TestTLSCluster.
type busNode struct {
	name          string
	port, busPort int
	c             *redis.Client
}

// linkedTo reports whether n lists id as a connected master out of
// handshake (its CLUSTER NODES line), with the line.
func (n busNode) linkedTo(id string) (bool, string) {
	out, err := n.c.ClusterNodes(context.Background()).Result()
	if err != nil {
		return false, n.name + ": " + err.Error()
	}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) >= 8 && f[0] == id {
			return strings.Contains(f[2], "master") && !strings.Contains(f[2], "handshake") && f[7] == "connected", n.name + ": " + l
		}
	}
	return false, n.name + " has no line for " + id + ":\n" + out
}

// TestTLSCluster: two goblin nodes with tls-cluster yes join by CLUSTER
// MEET and each lists the other connected; their bus port completes a TLS
// handshake with a client certificate from the CA and refuses one without
// (tls-auth-clients yes), so the links are TLS; a node with tls-cluster no
// never gets out of the handshake with them; a redis-server 7.0 node with
// tls-cluster yes joins the TLS pair and is listed connected both ways.
// CONFIG GET tls-cluster says yes.
func TestTLSCluster(t *testing.T) {
	t.Parallel() // its own processes, certificates and ports; it times nothing
	dir := t.TempDir()
	f, err := testcerts.Write(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	tlsArgs := []string{"--tls-cert-file", f.ServerCert, "--tls-key-file", f.ServerKey, "--tls-ca-cert-file", f.CACert,
		"--tls-client-cert-file", f.ClientCert, "--tls-client-key-file", f.ClientKey}
	bin := buildServer(t)
	goblin := func(name string, tlsCluster bool) busNode {
		ports := testproc.FreeTCPPorts(t, 2)
		n := busNode{name: name, port: ports[0], busPort: ports[1]}
		args := []string{"--listen", "tcp://127.0.0.1:" + strconv.Itoa(n.port), "--metrics", "off", "--dir", t.TempDir(),
			"--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(n.busPort), "--cluster-node-timeout", "2000"}
		if tlsCluster {
			args = append(append(args, "--tls-cluster", "yes"), tlsArgs...)
		}
		p := startProc(t, bin, args...)
		p.WaitLog(t, `msg=ready`, startTimeout)
		n.c = redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(n.port)})
		t.Cleanup(func() { n.c.Close() })
		return n
	}
	ctx := context.Background()
	id := func(n busNode) string { return n.c.ClusterMyID(ctx).Val() }
	meet := func(a, b busNode) {
		if err := a.c.Do(ctx, "CLUSTER", "MEET", "127.0.0.1", b.port, b.busPort).Err(); err != nil {
			t.Fatalf("%s CLUSTER MEET %s: %v", a.name, b.name, err)
		}
	}
	a, b := goblin("goblin-a", true), goblin("goblin-b", true)
	if v := a.c.ConfigGet(ctx, "tls-cluster").Val()["tls-cluster"]; v != "yes" {
		t.Fatalf("CONFIG GET tls-cluster: %q", v)
	}
	meet(a, b)
	testkit.Eventually(t, 30*time.Second, "goblin-a and goblin-b listing each other connected over the TLS bus", func() (bool, string) {
		ok1, l1 := a.linkedTo(id(b))
		ok2, l2 := b.linkedTo(id(a))
		return ok1 && ok2, l1 + "\n" + l2
	})

	// The bus speaks TLS and asks for a certificate.
	bus := net.JoinHostPort("127.0.0.1", strconv.Itoa(a.busPort))
	withCert, err := uds.ClientTLSConfig(uds.ClientTLSFiles{CACert: f.CACert, Cert: f.ClientCert, Key: f.ClientKey})
	if err != nil {
		t.Fatal(err)
	}
	handshake := func(cfg *tls.Config) error {
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", bus, cfg)
		if err != nil {
			return err
		}
		defer c.Close()
		// TLS 1.3: a refused client certificate shows at the first read.
		c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		_, err = c.Read(make([]byte, 1))
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return nil // accepted, and the bus waits for a message
		}
		return err
	}
	if err := handshake(withCert); err != nil {
		t.Fatalf("TLS handshake with the bus, with a client certificate: %v", err)
	}
	noCert, _ := uds.ClientTLSConfig(uds.ClientTLSFiles{CACert: f.CACert})
	if err := handshake(noCert); err == nil {
		t.Fatal("the bus accepted a TLS peer without a client certificate (tls-auth-clients yes)")
	}

	// A plaintext node cannot join.
	plain := goblin("goblin-plain", false)
	meet(plain, a)
	time.Sleep(3 * time.Second)
	if ok, l := plain.linkedTo(id(a)); ok {
		t.Fatalf("a tls-cluster no node got a link to a tls-cluster yes one: %s", l)
	}

	// redis-server 7.0 with tls-cluster yes.
	redisBin := testkit.Need(t, "redis-server", "the mixed TLS cluster bus")
	ports := testproc.FreeTCPPorts(t, 3)
	r := busNode{name: "redis", port: ports[1], busPort: ports[2]}
	rdir := t.TempDir()
	rp := testproc.Start(t, redisBin, "--port", strconv.Itoa(ports[0]), "--tls-port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(r.busPort), "--cluster-node-timeout", "2000",
		"--tls-cluster", "yes", "--tls-cert-file", f.ServerCert, "--tls-key-file", f.ServerKey, "--tls-ca-cert-file", f.CACert,
		"--tls-client-cert-file", f.ClientCert, "--tls-client-key-file", f.ClientKey,
		"--save", "", "--appendonly", "no", "--dir", rdir, "--cluster-config-file", rdir+"/nodes.conf")
	t.Cleanup(func() { rp.Stop(5 * time.Second) })
	testproc.WaitDial(t, "tcp", "127.0.0.1:"+strconv.Itoa(ports[0]), startTimeout)
	r.c = redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(ports[0])})
	defer r.c.Close()
	meet(a, r)
	testkit.Eventually(t, 30*time.Second, "redis-server and both goblin nodes listing each other connected over the TLS bus", func() (bool, string) {
		var lines []string
		all := true
		for _, p := range [][2]busNode{{a, r}, {r, a}, {b, r}, {r, b}} {
			ok, l := p[0].linkedTo(id(p[1]))
			all = all && ok
			lines = append(lines, l)
		}
		return all, strings.Join(lines, "\n")
	})
}
