package remote

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// localSSH stands in for ssh without a network: it runs the remote script
// (its last argument) on this machine, whatever options come before it.
var localSSH = SSH{"/bin/sh", "-c", `for a; do last=$a; done; exec /bin/sh -c "$last"`, "ssh"}

// helloReply is the agent's reply line to hello.
var helloReply = `{"result":{"protocol":` + strconv.Itoa(agentProtocol) + `}}`

// dialStandIn connects to a stand-in for the agent, the shell script
// body, over localSSH, and closes it when the test ends.
func dialStandIn(t *testing.T, body string) *sshHost {
	t.Helper()
	dir := t.TempDir()
	agent := filepath.Join(dir, "agent")
	if err := os.WriteFile(agent, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h, err := dialAgent(ctx, localSSH, "server", "stand-in", filepath.Join(dir, "root"), agent, filepath.Join(dir, "agent.log"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// Every caller cancels its context as soon as a call returns (defer
// cancel()). A call that has returned must not cut the connection then,
// however late the goroutine that watched its context gets to run. The
// agent here answers ahead of every request (its replies wait in the pipe
// already), so no call blocks, and on one processor nothing else runs
// until the calls are done: every watcher of the old code found its call
// done and its context cancelled at once, and picked the kill half the
// time.
func TestFinishedCallsLeaveTheConnectionUp(t *testing.T) {
	// Every reply is a hello's, whatever the request.
	h := dialStandIn(t, "yes '"+helloReply+"' &\nexec cat >/dev/null\n")
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for i := 0; i < 200; i++ {
		cctx, ccancel := context.WithCancel(context.Background())
		var hello agentHello
		err := h.call(cctx, "hello", nil, &hello)
		ccancel()
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	// Let every watcher run, then the connection must still serve.
	for i := 0; i < 100; i++ {
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var hello agentHello
	if err := h.call(ctx, "hello", nil, &hello); err != nil {
		t.Fatalf("a call after 200 finished ones: %v", err)
	}
}

// When the connection to the agent is lost, the error says how the
// agent's log ends: there the agent, or ssh, says why it went.
func TestLostConnectionQuotesTheAgentLog(t *testing.T) {
	// Answers hello, then says why it leaves on standard error, and leaves.
	h := dialStandIn(t, "read line\necho '"+helloReply+"'\nread line\necho 'agent: out of patience, leaving' >&2\nexit 3\n")
	_, err := h.FreePort("tcp", "127.0.0.1")
	if err == nil {
		t.Fatal("a call to an agent that left succeeded")
	}
	t.Log(err)
	for _, want := range []string{"connection to the agent lost during freeport", "agent: out of patience, leaving", "agent.log"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q: %v", want, err)
		}
	}
}

// A call whose context ends before the agent answers cuts the connection
// (an interrupted run): the call returns, saying so, and ssh is gone.
func TestCancelledCallCutsTheConnection(t *testing.T) {
	// Answers hello, then nothing more.
	h := dialStandIn(t, "read line\necho '"+helloReply+"'\nexec sleep 600\n")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cctx, ccancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer ccancel()
	err := h.call(cctx, "freeport", agentPort{Network: "tcp", Addr: "127.0.0.1"}, nil)
	if err == nil || !strings.Contains(err.Error(), context.DeadlineExceeded.Error()) {
		t.Fatalf("a call that timed out returned %v", err)
	}
	select {
	case <-h.exited():
	case <-time.After(time.Minute):
		t.Fatal("ssh still runs after the call's context ended")
	}
	if err := h.call(ctx, "hello", nil, nil); err == nil {
		t.Error("a call on the cut connection succeeded")
	}
}
