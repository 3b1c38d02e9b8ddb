package aeron_test

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	ae "github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/driver"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
	"github.com/goblin-kv/goblin/internal/testkit/wiretest"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/server"
	"github.com/goblin-kv/goblin/transport/aeron"
)

// runFlags returns the listeners `make run` starts goblin-server with
// (RUN_FLAGS in the Makefile), with their socket, ring and Aeron paths
// moved into dir and the TCP port made free, so the test runs what a
// newcomer runs without touching the machine's real paths.
func runFlags(t *testing.T, dir string) []string {
	t.Helper()
	root, err := testproc.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^RUN_FLAGS \?= --listen "(.*)"$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("no RUN_FLAGS ?= --listen \"...\" line in the Makefile")
	}
	var listen []string
	for _, l := range strings.Split(string(m[1]), ",") {
		switch {
		case strings.HasPrefix(l, "uds://"):
			l = "uds://" + filepath.Join(dir, "goblin.sock")
		case strings.HasPrefix(l, "tcp://"):
			l = "tcp://127.0.0.1:0"
		case strings.HasPrefix(l, "ring://"):
			_, q, _ := strings.Cut(l, "?")
			l = "ring://" + filepath.Join(dir, "ring") + "?" + q
		case strings.HasPrefix(l, "aeron:"):
			l += "|dir=" + filepath.Join(dir, "aeron")
		}
		listen = append(listen, "--listen", l)
	}
	return listen
}

// TestMakeRunStartsNoJVM: goblin-server with `make run`'s listeners runs
// its Aeron IPC listener on the in-process Go media driver: no java child
// process, a PING answered over Aeron by goblin-client, and the Makefile's
// run target does not build or need the Java interop project.
func TestMakeRunStartsNoJVM(t *testing.T) {
	dir := shmDir(t)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	bin := testproc.Build(t, "./cmd/goblin-server")
	p := testproc.Start(t, bin, append([]string{"--metrics", "off"}, runFlags(t, dir)...)...)
	p.WaitLog(t, `msg=ready`, 120*time.Second)
	if !strings.Contains(p.Log(), "aeron media driver running in-process") {
		t.Fatalf("the aeron listener did not run the Go driver in-process:\n%s", p.Log())
	}
	if kids := childCommands(t, p.PID); len(kids) != 0 {
		t.Fatalf("goblin-server started child processes %v", kids)
	}
	out, err := cli(t, "aeron:ipc?proto=sbe|dir="+filepath.Join(dir, "aeron"), "ping")
	if err != nil || strings.TrimSpace(out) != "PONG" {
		t.Fatalf("PING over Aeron IPC: %q (%v)", out, err)
	}
	if kids := childCommands(t, p.PID); len(kids) != 0 {
		t.Fatalf("goblin-server started child processes %v", kids)
	}
	root, _ := testproc.ModuleRoot()
	mk, _ := os.ReadFile(filepath.Join(root, "Makefile"))
	run := regexp.MustCompile(`(?m)^run:(.*)$`).FindSubmatch(mk)
	if run == nil || strings.Contains(string(run[1]), "setup") {
		t.Fatalf("make run depends on %q; it must need neither setup (Maven, aeron/interop/java) nor Java", run)
	}
}

// childCommands lists the commands of pid's child processes, from /proc.
func childCommands(t *testing.T, pid int) []string {
	t.Helper()
	var kids []string
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, c := range strings.Fields(string(b)) {
			comm, _ := os.ReadFile("/proc/" + c + "/comm")
			kids = append(kids, c+":"+strings.TrimSpace(string(comm)))
		}
	}
	return kids
}

// TestListenersShareTheInProcessDriver: two IPC listeners on one
// directory in one process share the Go driver the first one runs (the
// second is not refused as if another process owned it); both answer, and
// closing them closes the driver, marking its CnC shut down. The log
// says once that the driver runs in-process.
func TestListenersShareTheInProcessDriver(t *testing.T) {
	dir := shmDir(t)
	var logged lockedBuffer
	log := slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))
	respSrv := newInProcess(t, aeron.Options{Media: "ipc", Proto: proto.RESP, Dir: dir, Logger: log}, server.IdleYield)
	sbeSrv := newInProcess(t, aeron.Options{Media: "ipc", Proto: proto.SBE, Dir: dir, Stream: 2001, ReplyStream: 2002, Logger: log}, server.IdleYield)
	if n := strings.Count(logged.String(), "aeron media driver running in-process"); n != 1 {
		t.Errorf("%d lines say the driver runs in-process, want 1:\n%s", n, logged.String())
	}
	for _, tc := range []struct {
		p  *inProcess
		pr proto.Protocol
	}{{respSrv, proto.RESP}, {sbeSrv, proto.SBE}} {
		c := dial(t, tc.p.dialOptions(tc.pr))
		r, err := roundTrip(c, wiretest.Request(tc.pr, "PING"))
		if err != nil {
			t.Fatal(err)
		}
		wiretest.CheckReply(t, tc.pr, "PING", r)
	}
	if tgt := respSrv.srv.Target(); tgt.Params["driver"] != "go" {
		t.Fatalf("target %v does not say driver=go", tgt)
	}
	respSrv.loop.Stop()
	<-respSrv.loop.Done()
	cnc, err := ae.OpenCnC(dir)
	if err != nil {
		t.Fatal(err)
	}
	hb := cnc.DriverHeartbeat()
	cnc.Close()
	if hb == -1 {
		t.Fatal("the driver went with the first of its two listeners")
	}
	sbeSrv.loop.Stop()
	<-sbeSrv.loop.Done()
	if _, err := os.Stat(filepath.Join(dir, "cnc.dat")); !os.IsNotExist(err) {
		t.Fatalf("the driver's directory survived its last listener: %v", err)
	}
}

// lockedBuffer is a bytes.Buffer a logger on other goroutines and the test
// share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestGoDriverDirectoryConflictSaysWhatItIs: an in-process Go driver
// refused because another live driver owns its directory is told so in
// Aeron's words, with no other package's name ("javadriver:") in the way.
func TestGoDriverDirectoryConflictSaysWhatItIs(t *testing.T) {
	dir := shmDir(t)
	other, err := driver.New(driver.Options{Dir: dir}) // another driver, not one this package's listeners share
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, err = aeron.Listen(aeron.Options{Media: "ipc", Proto: proto.RESP, Dir: dir, Handler: newEngineHandler(t)})
	if !errors.Is(err, aeron.ErrDirInUse) {
		t.Fatalf("Listen in a live driver's directory: %v, want ErrDirInUse", err)
	}
	if msg := err.Error(); strings.Contains(msg, "javadriver") || !strings.Contains(msg, "a live media driver owns the directory") {
		t.Errorf("error %q: want it to say a live media driver owns the directory, without javadriver", msg)
	}
}

// TestInProcessDriverTakesImageLimitsFromEnv: the in-process driver's
// limits on what network senders can make it allocate come from the
// AERON_* environment, as aeronmd's do: a bad value stops the listener
// with an error naming the property.
func TestInProcessDriverTakesImageLimitsFromEnv(t *testing.T) {
	t.Setenv("AERON_DRIVER_STREAM_SESSION_LIMIT", "0")
	srv, err := aeron.Listen(aeron.Options{Media: "ipc", Proto: proto.RESP, Dir: shmDir(t), Handler: newEngineHandler(t)})
	if err == nil {
		srv.Close()
		t.Fatal("listened with AERON_DRIVER_STREAM_SESSION_LIMIT=0")
	}
	if !strings.Contains(err.Error(), "aeron.driver.stream.session.limit=0") {
		t.Fatalf("error %q does not name aeron.driver.stream.session.limit", err)
	}
	t.Setenv("AERON_DRIVER_STREAM_SESSION_LIMIT", "64")
	newInProcess(t, aeron.Options{Media: "ipc", Proto: proto.RESP, Dir: shmDir(t)}, server.IdleYield)
}
