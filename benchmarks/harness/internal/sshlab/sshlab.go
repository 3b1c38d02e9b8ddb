// Package sshlab is a test-only lab of two ssh hosts in network namespaces
// for the harness's two-host tests (root, ip, sshd). Only tests import it.
package sshlab

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/benchmarks/harness"
	"github.com/goblin-kv/goblin/internal/testkit"
)

// RequireTools fails the test under CI=true when a prerequisite is
// missing (CI must never skip silently) and skips it, saying what is
// missing, elsewhere.
func RequireTools(t *testing.T, root bool, tools ...string) {
	t.Helper()
	var missing []string
	if root && os.Geteuid() != 0 {
		missing = append(missing, "root (to create network namespaces)")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool+" (scripts/setup.sh installs it)")
		}
	}
	if len(missing) == 0 {
		return
	}
	testkit.Missing(t, "%s", strings.Join(missing, ", "))
}

// Lab is two machines in miniature: two network namespaces, "server"
// and "client", each running its own sshd on a veth address, and a third,
// the controller's, from which both are reached over ssh. The controller
// has a link to each host for ssh only; the hosts are joined by their own
// veth pairs, one per benchmark path, which the controller cannot reach:
// as with real hosts, the controller only talks ssh. Every name carries a
// random id, and the addresses exist only inside the lab's namespaces.
type Lab struct {
	t         *testing.T
	ID        string
	dir       string // keys, configs, logs
	Ctl       string // namespace names
	srv, cli  string
	SSHConfig string
	Server    string // ssh destinations (Host entries of sshConfig)
	Client    string
	NetPaths  []harness.NetPath
	sshds     []*exec.Cmd
	closed    bool
}

// Lab addresses: the ssh links and the benchmark paths. They live only in
// the lab's namespaces.
const (
	labCtlSrv = "10.77.1." // .1 controller, .2 server
	labCtlCli = "10.77.2." // .1 controller, .2 client
)

func labPathNet(i int) string { return fmt.Sprintf("10.77.%d.", 10+i) } // .1 server, .2 client

// New builds the lab with n benchmark paths and starts both sshds.
func New(t *testing.T, n int) *Lab {
	t.Helper()
	RequireTools(t, true, "ip", "ssh", "ssh-keygen", "/usr/sbin/sshd", "sha256sum")
	b := make([]byte, 3)
	rand.Read(b)
	id := hex.EncodeToString(b)
	l := &Lab{t: t, ID: id, dir: t.TempDir(), Ctl: "gblab-ctl-" + id, srv: "gblab-srv-" + id, cli: "gblab-cli-" + id,
		Server: "gblab-server-" + id, Client: "gblab-client-" + id}
	t.Cleanup(l.Close)
	for _, ns := range []string{l.Ctl, l.srv, l.cli} {
		l.ip("netns", "add", ns)
		l.ip("-n", ns, "link", "set", "lo", "up")
	}
	// Interface names must fit in 15 bytes: g + id + a suffix.
	l.link("g"+id+"cs", l.Ctl, labCtlSrv+"1", "g"+id+"sc", l.srv, labCtlSrv+"2")
	l.link("g"+id+"cc", l.Ctl, labCtlCli+"1", "g"+id+"cl", l.cli, labCtlCli+"2")
	for i := 0; i < n; i++ {
		net := labPathNet(i)
		l.link(fmt.Sprintf("g%sp%ds", id, i), l.srv, net+"1", fmt.Sprintf("g%sp%dc", id, i), l.cli, net+"2")
		l.NetPaths = append(l.NetPaths, harness.NetPath{Name: fmt.Sprintf("p%d", i+1), Server: net + "1", Client: net + "2"})
	}

	// Throwaway keys: one user key, one host key per sshd.
	userKey := filepath.Join(l.dir, "id_ed25519")
	l.run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "goblin-lab", "-f", userKey)
	pub, err := os.ReadFile(userKey + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	authorized := filepath.Join(l.dir, "authorized_keys")
	if err := os.WriteFile(authorized, pub, 0o600); err != nil {
		t.Fatal(err)
	}
	// sshd insists on its privilege-separation directory.
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		t.Fatal(err)
	}
	var known, config strings.Builder
	for _, h := range []struct{ name, ns, addr, dest string }{
		{"server", l.srv, labCtlSrv + "2", l.Server},
		{"client", l.cli, labCtlCli + "2", l.Client},
	} {
		hostKey := filepath.Join(l.dir, "host_"+h.name)
		l.run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", hostKey)
		hpub, err := os.ReadFile(hostKey + ".pub")
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&known, "%s %s", h.addr, hpub)
		cfg := filepath.Join(l.dir, "sshd_"+h.name+".conf")
		os.WriteFile(cfg, []byte(strings.Join([]string{
			"ListenAddress " + h.addr,
			"Port 22",
			"HostKey " + hostKey,
			"PidFile " + filepath.Join(l.dir, "sshd_"+h.name+".pid"),
			"AuthorizedKeysFile " + authorized,
			"StrictModes no", "UsePAM no", "PermitRootLogin prohibit-password",
			"PasswordAuthentication no", "KbdInteractiveAuthentication no", "PubkeyAuthentication yes",
			"AllowTcpForwarding no", "X11Forwarding no", "PrintMotd no", "MaxSessions 50", "MaxStartups 50",
		}, "\n")+"\n"), 0o600)
		logf, err := os.Create(filepath.Join(l.dir, "sshd_"+h.name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("ip", "netns", "exec", h.ns, "/usr/sbin/sshd", "-D", "-e", "-f", cfg)
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		l.sshds = append(l.sshds, cmd)
		fmt.Fprintf(&config, "Host %s\n  HostName %s\n  User root\n  IdentityFile %s\n  IdentitiesOnly yes\n"+
			"  UserKnownHostsFile %s\n  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n"+
			"  BatchMode yes\n  ConnectTimeout 30\n  LogLevel ERROR\n",
			h.dest, h.addr, userKey, filepath.Join(l.dir, "known_hosts"))
	}
	os.WriteFile(filepath.Join(l.dir, "known_hosts"), []byte(known.String()), 0o600)
	l.SSHConfig = filepath.Join(l.dir, "ssh_config")
	os.WriteFile(l.SSHConfig, []byte(config.String()), 0o600)
	// Wait for both sshds to answer.
	deadline := time.Now().Add(time.Minute)
	for _, dest := range []string{l.Server, l.Client} {
		for {
			out, err := exec.Command("ip", append([]string{"netns", "exec", l.Ctl}, l.ssh(dest, "true")...)...).CombinedOutput()
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				b, _ := os.ReadFile(filepath.Join(l.dir, "sshd_server.log"))
				c, _ := os.ReadFile(filepath.Join(l.dir, "sshd_client.log"))
				t.Fatalf("ssh %s does not answer: %v: %s\nsshd logs:\n%s\n%s", dest, err, out, b, c)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return l
}

// ssh is the argv that runs script on dest, as the controller does.
func (l *Lab) ssh(dest, script string) []string {
	return []string{"ssh", "-F", l.SSHConfig, "-T", "-o", "BatchMode=yes", dest, script}
}

// SSH is the controller's ssh command run from the test process: through
// the controller's namespace.
func (l *Lab) SSH() []string {
	return []string{"ip", "netns", "exec", l.Ctl, "ssh", "-F", l.SSHConfig}
}

func (l *Lab) ip(args ...string) {
	l.t.Helper()
	l.run("ip", args...)
}

func (l *Lab) run(name string, args ...string) {
	l.t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		l.t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
}

// link joins two namespaces with a veth pair and gives each end an address.
func (l *Lab) link(a, nsA, addrA, b, nsB, addrB string) {
	l.t.Helper()
	l.ip("link", "add", a, "type", "veth", "peer", "name", b)
	for _, e := range []struct{ ifc, ns, addr string }{{a, nsA, addrA}, {b, nsB, addrB}} {
		l.ip("link", "set", e.ifc, "netns", e.ns)
		l.ip("-n", e.ns, "addr", "add", e.addr+"/24", "dev", e.ifc)
		l.ip("-n", e.ns, "link", "set", e.ifc, "up")
	}
}

// nsPIDs lists the processes inside a namespace.
func nsPIDs(ns string) []int {
	out, _ := exec.Command("ip", "netns", "pids", ns).Output()
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if n, err := strconv.Atoi(f); err == nil {
			pids = append(pids, n)
		}
	}
	return pids
}

// sshdPIDs are the lab's sshd listeners.
func (l *Lab) sshdPIDs() []int {
	var pids []int
	for _, c := range l.sshds {
		pids = append(pids, c.Process.Pid)
	}
	return pids
}

// strangers are the processes in the host namespaces other than the sshd
// listeners: what a run left behind.
func (l *Lab) strangers() map[string][]string {
	out := map[string][]string{}
	for _, ns := range []string{l.Ctl, l.srv, l.cli} {
		for _, pid := range nsPIDs(ns) {
			if slices.Contains(l.sshdPIDs(), pid) {
				continue
			}
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			out[ns] = append(out[ns], fmt.Sprintf("%d %s", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
		}
	}
	return out
}

// SettledStrangers is strangers once sshd's session processes of the
// connections just closed have had up to 15 s to exit: what is still there
// then was left running.
func (l *Lab) SettledStrangers() map[string][]string {
	deadline := time.Now().Add(15 * time.Second)
	for {
		s := l.strangers()
		if len(s) == 0 || time.Now().After(deadline) {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Close stops the sshds and deletes the namespaces (and with them the
// veth pairs). It is safe to call more than once.
func (l *Lab) Close() {
	if l.closed {
		return
	}
	l.closed = true
	for _, c := range l.sshds {
		c.Process.Kill()
		c.Wait()
	}
	// Whatever a failed test left in the lab's namespaces is the test's own.
	for _, ns := range []string{l.Ctl, l.srv, l.cli} {
		for _, pid := range nsPIDs(ns) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	for _, ns := range []string{l.Ctl, l.srv, l.cli} {
		exec.Command("ip", "netns", "del", ns).Run()
	}
}

// Gone checks that the lab left nothing behind: no namespace, no sshd.
func (l *Lab) Gone(t *testing.T) {
	t.Helper()
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, ns := range []string{l.Ctl, l.srv, l.cli} {
		if strings.Contains(string(out), ns) {
			t.Errorf("namespace %s is still there", ns)
		}
	}
	for _, pid := range l.sshdPIDs() {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
			t.Errorf("sshd %d is still running", pid)
		}
	}
}

// Alive reports whether the process pid with start time start still runs.
func Alive(pid, start string) bool {
	n, _ := strconv.Atoi(pid)
	ticks, _ := strconv.ParseInt(start, 10, 64)
	return n > 0 && harness.StartTicks(n) == ticks && ticks != 0
}
