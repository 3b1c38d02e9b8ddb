package main

import (
	"bytes"
	"encoding/binary"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/internal/wire"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

func TestMain(m *testing.M) { testproc.Main(m) }

func TestHelpAndBadArguments(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"--help"}, nil, &out, &errOut); code != 0 ||
		!strings.Contains(out.String(), "aeron.ipc.term.buffer.length") || !strings.Contains(out.String(), "AERON_DIR") {
		t.Fatalf("--help: %d\n%s", code, out.String())
	}
	out.Reset()
	if code := run([]string{"-v"}, nil, &out, &errOut); code != 0 || !strings.Contains(out.String(), "1.51.0") {
		t.Fatalf("-v: %d %q", code, out.String())
	}
	for _, args := range [][]string{{"-x"}, {"-Dnovalue"}, {"/no/such/file.properties"},
		{"-Daeron.ipc.term.buffer.length=12345", "-Daeron.dir=" + t.TempDir()}} {
		errOut.Reset()
		if code := run(args, nil, &out, &errOut); code != 1 || errOut.Len() == 0 {
			t.Errorf("%q: exit %d, stderr %q", args, code, errOut.String())
		}
	}
}

// TestAeronmdLikeTheCDriver runs the binary as a script would run the C
// driver: configuration from the environment, -D definitions and a
// properties file (later sources win), a client served, a second driver
// refused, and exit 0 on SIGTERM with the logs deleted and the CnC marked
// shut down.
func TestAeronmdLikeTheCDriver(t *testing.T) {
	bin := testproc.Build(t, "./aeron/cmd/aeronmd")
	dir := filepath.Join(t.TempDir(), "aeron")
	props := filepath.Join(t.TempDir(), "driver.properties")
	// The file beats the -D (64k term), which beats the environment.
	if err := os.WriteFile(props, []byte("# goblin test\naeron.ipc.term.buffer.length=128k\n! comment\naeron.counters.buffer.length:\\\n 1m\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-Daeron.ipc.term.buffer.length=64k", "-Daeron.dir="+dir, "-Daeron.print.configuration=true", props)
	cmd.Env = append(os.Environ(), "AERON_DIR=/nonexistent/should/be/overridden", "AERON_IPC_TERM_BUFFER_LENGTH=1m")
	p, err := testproc.StartCmd(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(10 * time.Second) })
	p.WaitLog(t, "serving", time.Minute)
	c, err := aeron.Connect(aeron.Options{Dir: dir, DriverTimeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, p.Log())
	}
	pub, err := c.AddExclusivePublication("aeron:ipc", 1)
	if err != nil {
		t.Fatal(err)
	}
	if pub.TermBufferLength() != 128<<10 {
		t.Fatalf("term length %d, want the properties file's 128k", pub.TermBufferLength())
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "publications", "*.logbuffer"))
	if len(logs) != 1 {
		t.Fatalf("logs %v", logs)
	}
	// A second aeronmd on the same directory is refused while this one lives.
	second := exec.Command(bin, "-Daeron.dir="+dir)
	out, err := second.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "active media driver detected") {
		t.Fatalf("second driver: %v\n%s", err, out)
	}
	c.Close()
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code, err := p.Wait(time.Minute)
	if err != nil || code != 0 {
		t.Fatalf("exit %d, %v\n%s", code, err, p.Log())
	}
	if _, err := os.Stat(logs[0]); !os.IsNotExist(err) {
		t.Fatalf("log buffer left behind: %v", err)
	}
	cnc, err := aeron.OpenCnC(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer cnc.Close()
	if hb := cnc.DriverHeartbeat(); hb != -1 {
		t.Fatalf("heartbeat %d after shutdown, want -1", hb)
	}
}

// lockedBuffer is an io.Writer the child's output goroutines and the test
// share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestAeronmdStderrSilent: like the C aeronmd, a driver that starts, serves
// a UDP publication whose receiver answers with an error frame, and stops
// on SIGTERM writes nothing to stderr (Aeron's system-test harness fails a
// run whose driver did) and nothing to stdout unless
// aeron.print.configuration asks; the error frame is in the CnC error log.
func TestAeronmdStderrSilent(t *testing.T) {
	bin := testproc.Build(t, "./aeron/cmd/aeronmd")
	for _, printConfig := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "aeron")
		args := []string{"-Daeron.dir=" + dir}
		if printConfig {
			args = append(args, "-Daeron.print.configuration=true")
		}
		var stdout, stderr lockedBuffer
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		t.Cleanup(func() {
			if cmd.ProcessState == nil {
				cmd.Process.Kill()
				<-done
			}
		})
		c, err := aeron.Connect(aeron.Options{Dir: dir, DriverTimeout: 30 * time.Second})
		if err != nil {
			t.Fatalf("connect: %v\nstderr: %s", err, stderr.String())
		}
		// A fake receiver: it answers the publication's SETUP with a
		// status message (so it is a live receiver) and then an ERR frame.
		rcv, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		defer rcv.Close()
		pub, err := c.AddExclusivePublication("aeron:udp?endpoint="+rcv.LocalAddr().String(), 7)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 2048)
		var from *net.UDPAddr
		for {
			rcv.SetReadDeadline(time.Now().Add(30 * time.Second))
			n, a, err := rcv.ReadFromUDP(buf)
			if err != nil {
				t.Fatalf("no SETUP from the publication within 30s: %v", err)
			}
			if n >= wire.SetupLength && binary.LittleEndian.Uint16(buf[6:]) == wire.TypeSetup {
				from = a
				break
			}
		}
		setup := wire.Setup(buf[:wire.SetupLength])
		sm := make([]byte, wire.SMLengthWithGroupTag)
		n := wire.PutSM(sm, &wire.SMFields{SessionID: pub.SessionID(), StreamID: 7, TermID: setup.ActiveTermID(),
			Window: 64 << 10, ReceiverID: 77})
		if _, err := rcv.WriteToUDP(sm[:n], from); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for logged := false; !logged; {
			if _, err := rcv.WriteToUDP(wire.AppendErr(nil, pub.SessionID(), 7, 77, 0, false, 13, "go away"), from); err != nil {
				t.Fatal(err)
			}
			c.ReadErrors(0, func(r aeron.ErrorRecord) {
				logged = logged || strings.Contains(r.Text, "onPublicationError") && strings.Contains(r.Text, "go away")
			})
			if time.Now().After(deadline) {
				t.Fatal("the error frame never reached the CnC error log as onPublicationError within 30s")
			}
			time.Sleep(20 * time.Millisecond)
		}
		c.Close()
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("exit: %v\nstderr: %s", err, stderr.String())
			}
		case <-time.After(time.Minute):
			t.Fatal("aeronmd did not exit within a minute of SIGTERM")
		}
		if s := stderr.String(); s != "" {
			t.Errorf("print.configuration=%v: stderr not empty:\n%s", printConfig, s)
		}
		if s := stdout.String(); printConfig != strings.Contains(s, "serving") || !printConfig && s != "" {
			t.Errorf("print.configuration=%v: stdout:\n%s", printConfig, s)
		}
	}
}
