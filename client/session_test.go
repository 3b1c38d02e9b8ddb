package client

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// killConn closes c's connection from the server's side (CLIENT KILL ID
// through another connection), as a server restart or an idle timeout
// would.
func killConn(t *testing.T, c *Client, admin *Client) {
	t.Helper()
	ctx := ctxT(t)
	id, err := c.Do(ctx, "CLIENT", "ID")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := admin.Do(ctx, "CLIENT", "KILL", "ID", id.Int); err != nil || v.Int != 1 {
		t.Fatalf("CLIENT KILL ID %d: %v %v", id.Int, v, err)
	}
}

// doAfterKill runs args on c, whose connection the server has closed: the
// first call may see the closed connection (a *ConnError) and the next
// one redials.
func doAfterKill(t *testing.T, c *Client, args ...any) Value {
	t.Helper()
	ctx := ctxT(t)
	for attempt := 0; ; attempt++ {
		v, err := c.Do(ctx, args...)
		var ce *ConnError
		if errors.As(err, &ce) && attempt == 0 {
			continue
		}
		if err != nil {
			t.Fatalf("%v after the connection was killed: %v", args, err)
		}
		return v
	}
}

// TestRedialKeepsDatabaseAndName: a database chosen with SELECT (or
// Options.DB) and a name set with CLIENT SETNAME (or Options.ClientName)
// survive a connection the server closed: the SET after the redial lands
// in the same database, under the same name, over RESP and SBE.
func TestRedialKeepsDatabaseAndName(t *testing.T) {
	targets := testproc.StartGoblinServer(t)
	for _, name := range []string{"uds/resp", "tcp/sbe"} {
		t.Run(name, func(t *testing.T) {
			ctx := ctxT(t)
			admin := dialT(t, targets["uds/resp"])
			key := "redial:" + name
			for _, how := range []string{"SELECT", "Options"} {
				var c *Client
				if how == "SELECT" {
					c = dialT(t, targets[name])
					if _, err := c.Do(ctx, "SELECT", 3); err != nil {
						t.Fatal(err)
					}
					if _, err := c.Do(ctx, "CLIENT", "SETNAME", "app1"); err != nil {
						t.Fatal(err)
					}
				} else {
					c = dialWithT(t, Options{DB: 3, ClientName: "app1"}, targets[name])
				}
				if c.DB() != 3 {
					t.Fatalf("%s: DB() = %d, want 3", how, c.DB())
				}
				killConn(t, c, admin)
				doAfterKill(t, c, "SET", key, how)
				if v, err := c.Do(ctx, "CLIENT", "GETNAME"); err != nil || string(v.Str) != "app1" {
					t.Errorf("%s: after the redial CLIENT GETNAME = %v, %v; want app1", how, v, err)
				}
				if _, err := admin.Do(ctx, "SELECT", 3); err != nil {
					t.Fatal(err)
				}
				if v, _ := admin.Do(ctx, "GET", key); string(v.Str) != how {
					t.Errorf("%s: the SET after the redial is not in database 3: GET there = %v", how, v)
				}
				if _, err := admin.Do(ctx, "SELECT", 0); err != nil {
					t.Fatal(err)
				}
				if v, _ := admin.Do(ctx, "GET", key); v.Kind != KindNil {
					t.Errorf("%s: the SET after the redial reached database 0: GET there = %v", how, v)
				}
				// A refused SELECT changes nothing.
				if _, err := c.Do(ctx, "SELECT", 99999); err == nil {
					t.Fatal("SELECT 99999 succeeded")
				}
				if c.DB() != 3 {
					t.Errorf("%s: a refused SELECT moved DB() to %d", how, c.DB())
				}
			}
		})
	}
}

// TestPipelineSelectIsKept: SELECT inside a pipeline is remembered too.
func TestPipelineSelectIsKept(t *testing.T) {
	targets := testproc.StartGoblinServer(t)
	ctx := ctxT(t)
	c := dialT(t, targets["uds/resp"])
	admin := dialT(t, targets["uds/resp"])
	if _, err := c.Pipeline().Do("SELECT", 5).Do("PING").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if c.DB() != 5 {
		t.Fatalf("DB() after a pipelined SELECT 5 = %d", c.DB())
	}
	killConn(t, c, admin)
	doAfterKill(t, c, "SET", "p", "1")
	admin.Do(ctx, "SELECT", 5)
	if v, _ := admin.Do(ctx, "GET", "p"); string(v.Str) != "1" {
		t.Fatalf("the SET after the redial is not in database 5: %v", v)
	}
}

// TestModeCommandsRefused: Do and pipelines refuse the commands that would
// change what the connection carries, naming the API to use, and the
// connection stays in step (the next command gets its own reply).
func TestModeCommandsRefused(t *testing.T) {
	targets := testproc.StartGoblinServer(t)
	ctx := ctxT(t)
	c := dialT(t, targets["uds/resp"])
	for _, args := range [][]any{
		{"MONITOR"}, {"monitor"}, {"SUBSCRIBE", "ch"}, {"PSUBSCRIBE", "c*"}, {"SSUBSCRIBE", "ch"}, {"RESET"},
		{"CLIENT", "REPLY", "OFF"}, {"client", "reply", "skip"},
	} {
		_, err := c.Do(ctx, args...)
		if !errors.Is(err, ErrModeCommand) {
			t.Errorf("Do%v = %v, want ErrModeCommand", args, err)
		}
		if v, err := c.Do(ctx, "ECHO", "in step"); err != nil || string(v.Str) != "in step" {
			t.Fatalf("after Do%v, ECHO answered %v, %v", args, v, err)
		}
		if _, err := c.Pipeline().Do("PING").Do(args...).Exec(ctx); !errors.Is(err, ErrModeCommand) {
			t.Errorf("Pipeline with %v = %v, want ErrModeCommand", args, err)
		}
	}
	_, err := c.Do(ctx, "MONITOR")
	if err == nil || !strings.Contains(err.Error(), "Client.Monitor") {
		t.Errorf("MONITOR's error does not name Client.Monitor: %v", err)
	}
	if v, err := c.Do(ctx, "CLIENT", "REPLY", "ON"); err != nil || string(v.Str) != "OK" {
		t.Errorf("CLIENT REPLY ON: %v %v", v, err)
	}
}

// TestMonitor: Client.Monitor streams the commands other connections run,
// and the Client stays usable beside it.
func TestMonitor(t *testing.T) {
	targets := testproc.StartGoblinServer(t)
	ctx := ctxT(t)
	c := dialT(t, targets["uds/resp"])
	m, err := c.Monitor(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for i := range 3 {
		if err := c.Set(ctx, "mon"+strconv.Itoa(i), []byte("v"), SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		nctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		line, err := m.Next(nctx)
		cancel()
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if want := `"SET" "mon` + strconv.Itoa(i) + `" "v"`; !strings.Contains(strings.ToUpper(line[:strings.Index(line, "]")+1])+line[strings.Index(line, "]")+1:], want) &&
			!strings.Contains(line, `"set" "mon`+strconv.Itoa(i)+`" "v"`) {
			t.Fatalf("line %d = %q, want it to show %s", i, line, want)
		}
	}
	// A context that ends returns its error and keeps the stream.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err = m.Next(short)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next with nothing to report = %v, want the context's deadline", err)
	}
	c.Do(ctx, "PING")
	if line, err := m.Next(ctx); err != nil || !strings.Contains(strings.ToUpper(line), `"PING"`) {
		t.Fatalf("after a timeout Next = %q, %v", line, err)
	}
	// Close from another goroutine ends a Next that waits.
	done := make(chan error, 1)
	go func() {
		_, err := m.Next(ctx)
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, ErrMonitorClosed) {
			t.Fatalf("a waiting Next after Close = %v, want ErrMonitorClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end a waiting Next within 5s")
	}
	if _, err := m.Next(ctx); !errors.Is(err, ErrMonitorClosed) {
		t.Fatalf("Next after Close = %v", err)
	}
}

// TestProtocol3: Options.Protocol 3 sends HELLO 3 on every connection, so
// replies keep coming as RESP3 after a redial; the typed calls work on
// RESP3 replies too.
func TestProtocol3(t *testing.T) {
	targets := testproc.StartGoblinServer(t)
	ctx := ctxT(t)
	c := dialWithT(t, Options{Protocol: 3}, targets["tcp/resp"])
	admin := dialT(t, targets["uds/resp"])
	check := func(when string) {
		v, err := c.Do(ctx, "CONFIG", "GET", "maxmemory")
		if err != nil || v.Kind != KindMap || len(v.Array) != 2 || string(v.Array[0].Str) != "maxmemory" {
			t.Fatalf("%s: CONFIG GET = %v (%v), %v; want a RESP3 map", when, v, v.Kind, err)
		}
		if _, err := c.Get(ctx, "missing"); !errors.Is(err, ErrNil) {
			t.Fatalf("%s: Get of a missing key over RESP3 = %v, want ErrNil", when, err)
		}
	}
	check("first connection")
	if err := c.Set(ctx, "k", []byte("v"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	killConn(t, c, admin)
	doAfterKill(t, c, "PING")
	check("after the redial")
	// HELLO 3 sent with Do is kept for redials the same way.
	d := dialT(t, targets["tcp/resp"])
	if v, err := d.Do(ctx, "HELLO", "3"); err != nil || v.Kind != KindMap {
		t.Fatalf("HELLO 3: %v %v", v, err)
	}
	killConn(t, d, admin)
	doAfterKill(t, d, "PING")
	if v, err := d.Do(ctx, "CONFIG", "GET", "maxmemory"); err != nil || v.Kind != KindMap {
		t.Fatalf("after HELLO 3 and a redial, CONFIG GET = %v (%v), %v", v, v.Kind, err)
	}
	// RESP3 over an SBE target is refused at once.
	if _, err := (Options{Protocol: 3}).Dial(ctx, targets["uds/sbe"]); err == nil || !strings.Contains(err.Error(), "RESP3") {
		t.Fatalf("Protocol 3 over SBE: %v", err)
	}
}

// TestRESP3PushesAreNotReplies: a push the server sends before a reply
// (Redis's DEBUG PROTOCOL push) goes to Options.OnPush and the command
// gets its own reply; an attribute rides on the reply it describes.
func TestRESP3PushesAreNotReplies(t *testing.T) {
	bin := testkit.Need(t, "redis-server", "the RESP3 reference server")
	dir := t.TempDir()
	sock := dir + "/redis.sock"
	testproc.Start(t, bin, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no",
		"--dir", dir, "--enable-debug-command", "yes")
	testproc.WaitDial(t, "unix", sock, 30*time.Second)
	ctx := ctxT(t)
	var pushes []Value
	c := dialWithT(t, Options{Protocol: 3, OnPush: func(v Value) { pushes = append(pushes, v) }}, sock)
	v, err := c.Do(ctx, "DEBUG", "PROTOCOL", "push")
	if err != nil || v.Kind != KindBulk || !strings.HasPrefix(string(v.Str), "Some real reply") {
		t.Fatalf("DEBUG PROTOCOL push answered %v (%v), %v", v, v.Kind, err)
	}
	if len(pushes) != 1 || pushes[0].Kind != KindPush {
		t.Fatalf("pushes seen: %v", pushes)
	}
	if v, err := c.Do(ctx, "PING"); err != nil || string(v.Str) != "PONG" {
		t.Fatalf("after the push, PING = %v, %v", v, err)
	}
	v, err = c.Do(ctx, "DEBUG", "PROTOCOL", "attrib")
	if err != nil || len(v.Attrs) != 2 {
		t.Fatalf("DEBUG PROTOCOL attrib answered %+v, %v", v, err)
	}
	for ty, kind := range map[string]Kind{"map": KindMap, "set": KindSet, "double": KindDouble, "bignum": KindBigNumber,
		"true": KindBool, "null": KindNil, "verbatim": KindVerbatim} {
		if v, err := c.Do(ctx, "DEBUG", "PROTOCOL", ty); err != nil || v.Kind != kind {
			t.Errorf("DEBUG PROTOCOL %s: %v (%v), %v; want %v", ty, v, v.Kind, err, kind)
		}
	}
}

// TestNoSBEReply: an SBE request to a server that speaks only RESP either
// gets no answer (it waits for a line end) or a RESP error; both are
// reported as ErrNoSBEReply, naming the cause, rather than as a bare
// timeout or a framing error.
func TestNoSBEReply(t *testing.T) {
	silent := fakeServer(t, func(c net.Conn) { io.Copy(io.Discard, c) })
	resp := fakeServer(t, func(c net.Conn) {
		buf := make([]byte, 4096)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
			c.Write([]byte("-ERR unknown command '\\x00', with args beginning with: \r\n"))
		}
	})
	for sock, want := range map[string]string{silent: "before the deadline", resp: "a RESP reply"} {
		c := dialT(t, "uds://"+sock+"?proto=sbe")
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		err := c.Ping(ctx)
		cancel()
		if !errors.Is(err, ErrNoSBEReply) || !strings.Contains(err.Error(), want) {
			t.Errorf("SBE PING to a RESP-only server = %v; want ErrNoSBEReply saying %q", err, want)
		}
	}
	// Once SBE replies have come, a timeout is only a timeout.
	targets := testproc.StartGoblinServer(t)
	c := dialT(t, targets["uds/sbe"])
	if err := c.Ping(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	time.Sleep(2 * time.Millisecond)
	if _, err := c.Do(ctx, "PING"); errors.Is(err, ErrNoSBEReply) {
		t.Errorf("a late timeout on a working SBE connection blamed the protocol: %v", err)
	}
}

// TestTxSelectIsKept: SELECT inside MULTI/EXEC is remembered once EXEC
// has run it.
func TestTxSelectIsKept(t *testing.T) {
	targets := testproc.StartGoblinServer(t)
	ctx := ctxT(t)
	c := dialT(t, targets["uds/resp"])
	if _, err := c.TxPipeline().Do("SELECT", 4).Do("SET", "tx", "1").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if c.DB() != 4 {
		t.Fatalf("DB() after SELECT 4 in a transaction = %d", c.DB())
	}
}
