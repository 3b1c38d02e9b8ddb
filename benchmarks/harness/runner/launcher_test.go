package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/benchmarks/harness"
	"github.com/goblin-kv/goblin/benchmarks/harness/internal/sshlab"
	"github.com/goblin-kv/goblin/benchmarks/harness/report"
	"github.com/goblin-kv/goblin/internal/testkit"
)

// runLauncher runs benchmarks/aeron_network_latency.sh with env (and the
// process's own) under prefix (e.g. ip netns exec CTL), and returns its
// process id (the launcher names its namespaces after it) and output.
func runLauncher(t *testing.T, prefix []string, env ...string) (int, string) {
	t.Helper()
	script := filepath.Join(harness.RepoRoot(), "benchmarks", "aeron_network_latency.sh")
	argv := append(append([]string(nil), prefix...), "bash", script, "-quiet")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	// GOPROXY=off: everything the launcher builds is in the module cache
	// already (this test was built from it), and a namespace has no
	// network to fetch from.
	cmd.Env = append(os.Environ(), append([]string{"SKIP_SETUP=1", "GOPROXY=off", "GOFLAGS="}, env...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		for _, e := range env {
			if dir, ok := strings.CutPrefix(e, "OUT_DIR="); ok {
				keepArchive(dir) // the agents' logs say why a host went
			}
		}
		t.Fatalf("launcher: %v\n%s", err, out)
	}
	return cmd.Process.Pid, string(out)
}

// keepArchive copies a run's archive to $GOBLIN_LAB_KEEP, when set, before
// the test's temporary directory goes.
func keepArchive(dir string) {
	if keep := os.Getenv("GOBLIN_LAB_KEEP"); keep != "" {
		exec.Command("cp", "-a", dir, keep).Run()
	}
}

// caseDirs lists the case directories of a run directory.
func caseDirs(t *testing.T, runDir string) []string {
	t.Helper()
	ents, err := os.ReadDir(runDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, filepath.Join(runDir, e.Name()))
		}
	}
	return out
}

// mustHave fails for each of names missing under dir.
func mustHave(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		st, err := os.Stat(filepath.Join(dir, n))
		if err != nil {
			t.Errorf("archive lacks %s", filepath.Join(dir, n))
		} else if st.Size() == 0 {
			t.Errorf("%s is empty", filepath.Join(dir, n))
		}
	}
}

// procLine is one line of processes.txt.
var procLine = regexp.MustCompile(`^(server|client) (\S+) pid=(\d+) start=(\d+) `)

// TestTwoHostLauncher runs the two-host launcher for real: two network
// namespaces with their own sshd stand in for two hosts, the controller
// runs in a third that reaches them only over ssh, two benchmark paths
// join the hosts, and the matrix runs once plus a qualification pass, with
// tiny sample counts. It checks that the archive is complete, that every
// staged file's hash matches from both hosts, that every case had fresh
// processes, that the response channels are derived from the server's
// address, and that nothing is left running on either side.
func TestTwoHostLauncher(t *testing.T) {
	t.Parallel() // its own namespaces, archive and processes; mostly waits on them
	sshlab.RequireTools(t, true, "java", "go", "bash")
	_, err := harness.AeronJar(&harness.Config{})
	testkit.Require(t, "the Aeron jar", err)
	lab := sshlab.New(t, 2)
	out := filepath.Join(t.TempDir(), "archive")
	remote := t.TempDir()
	paths := lab.NetPaths[0].String() + "," + lab.NetPaths[1].String()
	_, log := runLauncher(t, []string{"ip", "netns", "exec", lab.Ctl},
		"HOSTS="+lab.Server+":"+lab.Client, "SSH=ssh -F "+lab.SSHConfig, "PATHS="+paths, "REMOTE_DIR="+remote,
		"RUNS=1", "WARMUP=20", "SAMPLES=200", "SYSTEMS=goblin", "TRANSPORTS=tcp,aeron-udp", "PROTOCOLS=SBE", "OPS=PING,SET",
		"PROFILE=backoff", "QUALIFY=1", "CASE_TIMEOUT=2m", "OUT_DIR="+out,
		// Placement as the continuous-polling profile does it, on the
		// lab's two CPUs and backing off: each driver's agents pinned one
		// by one after start, the store loop and the measuring thread on
		// CPU 0 alone, everything else on CPU 1.
		"SERVER_AGENTS=conductor=1,sender=0,receiver=1", "CLIENT_AGENTS=conductor=1,sender=1,receiver=0",
		"SERVER_CPU=0", "CLIENT_CPU=0", "HOUSEKEEPING_CPU=1", "DRIVER_CPU=1")
	t.Log(harness.LastLines(log, 12))
	keepArchive(out)

	// Nothing is left running on either host (nor in the controller's
	// namespace), and no runtime directory is left on them.
	if s := lab.SettledStrangers(); len(s) > 0 {
		t.Errorf("processes left running after the launcher: %v", s)
	}
	if left := processesUnder(out, remote); len(left) > 0 {
		t.Errorf("processes of this run still running: %v", left)
	}
	if m, _ := filepath.Glob(filepath.Join(remote, "goblin-bench-*")); len(m) > 0 {
		t.Errorf("runtime directories left on the hosts: %v", m)
	}

	// The archive: the files of every run, and its hashes verify.
	mustHave(t, out, report.LatencyCSV, report.AggregateCSV, report.MetadataTXT, report.SummaryMD, report.SumsFile,
		"hosts/SHA256SUMS.build", "hosts/SHA256SUMS.server", "hosts/SHA256SUMS.client",
		"hosts/agent-server.log", "hosts/agent-client.log",
		"run-1/host-server.txt", "run-1/host-client.txt",
		harness.QualificationDir+"/"+report.LatencyCSV, harness.QualificationDir+"/run-1/host-server.txt")
	if err := report.VerifySums(out); err != nil {
		t.Errorf("SHA256SUMS: %v", err)
	}

	// Every staged file's hash, as each host saw it, is the build's.
	build := parseSumsByName(t, filepath.Join(out, "hosts/SHA256SUMS.build"))
	for _, want := range []string{"goblin-bench", "goblin-server", "aeron-all"} {
		found := false
		for n := range build {
			found = found || strings.HasPrefix(n, want)
		}
		if !found {
			t.Errorf("SHA256SUMS.build has no %s: %v", want, build)
		}
	}
	for _, role := range []string{"server", "client"} {
		seen := parseSumsByName(t, filepath.Join(out, "hosts/SHA256SUMS."+role))
		if len(seen) != len(build) {
			t.Errorf("the %s host hashed %d files, the build has %d", role, len(seen), len(build))
		}
		for n, sum := range build {
			if seen[n] != sum {
				t.Errorf("the %s host sees %s as %q, the build is %s", role, n, seen[n], sum)
			}
		}
	}

	meta, _ := os.ReadFile(filepath.Join(out, report.MetadataTXT))
	for _, want := range []string{"hosts.server: ssh " + lab.Server, "hosts.client: ssh " + lab.Client,
		"path.p1: server " + lab.NetPaths[0].Server + ", client " + lab.NetPaths[0].Client,
		"path.p2: server " + lab.NetPaths[1].Server, "host.server.uname: Linux", "host.client.cpu.model:",
		"host.server.nic." + lab.NetPaths[0].Server + ".interface: g" + lab.ID, "host.client.nic." + lab.NetPaths[1].Client + ".numa_node:",
		"host.server.cpu.governor:", "staging.sha256.goblin-server:", "qualification:"} {
		if !strings.Contains(string(meta), "\n"+want) {
			t.Errorf("metadata.txt lacks %q", want)
		}
	}

	// Rows: two paths × two transports × two operations, all measured,
	// the qualification pass in its own CSV only.
	lat := readCSV(t, filepath.Join(out, report.LatencyCSV), report.LatencyHeader, 8)
	checkRows(t, report.LatencyCSV, lat, report.LatencyHeader, 200)
	readCSV(t, filepath.Join(out, report.AggregateCSV), report.AggregateHeader, 8)
	qual := readCSV(t, filepath.Join(out, harness.QualificationDir, report.LatencyCSV), report.LatencyHeader, 8)
	checkRows(t, "qualification "+report.LatencyCSV, qual, report.LatencyHeader, 200)
	for _, r := range append(lat, qual...) {
		if r[5] != harness.StatusOK {
			t.Errorf("row not measured: %v", r)
		}
		if p := r[len(r)-1]; p != "p1" && p != "p2" {
			t.Errorf("row without its path: %v", r)
		}
	}

	// Per case: the files, fresh processes, the channels, affinities.
	type procKey struct{ pid, start string }
	seen := map[procKey]string{}
	var cases []string
	for _, base := range []string{out, filepath.Join(out, harness.QualificationDir)} {
		cases = append(cases, caseDirs(t, filepath.Join(base, "run-1"))...)
	}
	if len(cases) != 8 {
		t.Fatalf("%d case directories, want 8 (4 cases, measured and qualified): %v", len(cases), cases)
	}
	for _, dir := range cases {
		id := filepath.Base(dir)
		qualified := strings.Contains(dir, "/"+harness.QualificationDir+"/")
		aeronCase := strings.Contains(id, "aeron-udp")
		mustHave(t, dir, "case.txt", "processes.txt", "affinity.txt", "channels.txt", "ping.distribution.csv", "set.distribution.csv",
			"server/nic-before.txt", "server/nic-after.txt", "client/nic-before.txt", "client/nic-after.txt",
			"server/goblin-server.log", "client/probe.log")
		if aeronCase {
			mustHave(t, dir, "server/driver-server.log", "client/driver-client.log",
				"server/driver-server.counters.txt", "client/driver-client.counters.txt")
			counters, _ := os.ReadFile(filepath.Join(dir, "server/driver-server.counters.txt"))
			if !strings.Contains(string(counters), "Bytes sent") {
				t.Errorf("%s: the server driver's counters do not look like counters:\n%s", id, counters)
			}
			if qualified {
				mustHave(t, dir, "server/stats-driver-server.log", "client/stats-driver-client.log")
			}
		}
		nic, _ := os.ReadFile(filepath.Join(dir, "server/nic-after.txt"))
		if !strings.Contains(string(nic), "/proc/net/dev") || !strings.Contains(string(nic), "interface: g"+lab.ID) {
			t.Errorf("%s: server/nic-after.txt names no interface or lacks /proc/net/dev:\n%s", id, nic)
		}

		procs, _ := os.ReadFile(filepath.Join(dir, "processes.txt"))
		want := map[string]string{"goblin-server": "server"}
		if aeronCase {
			want["driver-server"], want["driver-client"] = "server", "client"
		}
		for _, line := range strings.Split(string(procs), "\n") {
			m := procLine.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			if role, ok := want[m[2]]; ok && role == m[1] {
				delete(want, m[2])
			}
			k := procKey{m[3], m[4]}
			if prev, ok := seen[k]; ok {
				t.Errorf("%s: %s (pid %s) is the same process as in %s: not fresh", id, m[2], m[3], prev)
			}
			seen[k] = id
			if sshlab.Alive(m[3], m[4]) {
				t.Errorf("%s: %s (pid %s) still runs", id, m[2], m[3])
			}
		}
		if len(want) > 0 {
			t.Errorf("%s: processes.txt lacks %v:\n%s", id, want, procs)
		}

		// The response channels: both addresses are the server's.
		path := lab.NetPaths[0]
		if strings.HasSuffix(id, "-p2") {
			path = lab.NetPaths[1]
		}
		ch, _ := os.ReadFile(filepath.Join(dir, "channels.txt"))
		if aeronCase {
			for _, want := range []string{"aeron:udp?endpoint=" + path.Server + ":", "aeron:udp?control=" + path.Server + ":",
				"control-mode=response", "stream 1001", "stream 1002"} {
				if !strings.Contains(string(ch), want) {
					t.Errorf("%s: channels.txt lacks %q:\n%s", id, want, ch)
				}
			}
			if strings.Contains(string(ch), path.Client) {
				t.Errorf("%s: a goblin channel names the client's address %s:\n%s", id, path.Client, ch)
			}
		}
		// Every pin was checked after start, over ssh.
		aff, _ := os.ReadFile(filepath.Join(dir, "affinity.txt"))
		wantAff := []string{"server goblin-server", "ok (unnamed; on store-loop's 0)", "ok (within 1)"}
		if aeronCase {
			wantAff = append(wantAff, `"sender"         cpus=0 ok (sender asked 0)`, `"receiver"       cpus=1 ok (receiver asked 1)`,
				`client driver-client`, `"receiver"       cpus=0 ok (receiver asked 0)`)
		}
		for _, want := range wantAff {
			if !strings.Contains(string(aff), want) {
				t.Errorf("%s: affinity.txt lacks %q:\n%s", id, want, aff)
			}
		}
		if strings.Contains(string(aff), "WRONG") {
			t.Errorf("%s: affinity.txt:\n%s", id, aff)
		}
		if info, _ := os.ReadFile(filepath.Join(dir, "case.txt")); !strings.Contains(string(info), "\nclient.affinity: 0\n") {
			t.Errorf("%s: the measuring thread did not run on CPU 0 alone:\n%s", id, info)
		}
	}
	if len(seen) < 4+2*4 {
		t.Errorf("only %d distinct processes over 8 case runs", len(seen))
	}

	lab.Close()
	lab.Gone(t)
}

// parseSumsByName reads a sha256sum file: hash by file base name.
func parseSumsByName(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		sum, file, ok := strings.Cut(line, "  ")
		if !ok || len(sum) != 64 {
			t.Errorf("%s: not a sha256sum line: %q", path, line)
			continue
		}
		m[filepath.Base(file)] = sum
	}
	return m
}

// processesUnder lists the processes whose working directory or command
// line lies under one of dirs: what a run whose files live there left
// running, whichever namespace it is in (other runs on the machine have
// directories of their own).
func processesUnder(dirs ...string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		cwd, _ := os.Readlink(filepath.Join(p, "cwd"))
		cmdline, _ := os.ReadFile(filepath.Join(p, "cmdline"))
		cmd := strings.ReplaceAll(string(cmdline), "\x00", " ")
		for _, d := range dirs {
			if strings.HasPrefix(cwd, d) || strings.Contains(cmd, d) {
				out = append(out, filepath.Base(p)+" "+cmd)
				break
			}
		}
	}
	return out
}

// TestNamespaceLauncher runs the same launcher in its namespace-only mode
// (no HOSTS): servers in one namespace, the client in another, tiny
// counts. The archive is complete and the launcher's namespaces are gone.
func TestNamespaceLauncher(t *testing.T) {
	t.Parallel() // its own namespaces, archive and processes; mostly waits on them
	sshlab.RequireTools(t, true, "ip", "java", "go", "bash")
	out := filepath.Join(t.TempDir(), "archive")
	pid, log := runLauncher(t, nil, "RUNS=1", "WARMUP=20", "SAMPLES=200", "SYSTEMS=goblin", "TRANSPORTS=tcp,aeron-udp",
		"PROTOCOLS=SBE", "OPS=PING", "PROFILE=backoff", "CASE_TIMEOUT=2m", "OUT_DIR="+out)
	t.Log(harness.LastLines(log, 8))
	if left := processesUnder(out); len(left) > 0 {
		t.Errorf("processes of this run still running: %v", left)
	}
	mustHave(t, out, report.LatencyCSV, report.AggregateCSV, report.MetadataTXT, report.SummaryMD, report.SumsFile, "run-1/host-server.txt")
	if err := report.VerifySums(out); err != nil {
		t.Errorf("SHA256SUMS: %v", err)
	}
	lat := readCSV(t, filepath.Join(out, report.LatencyCSV), report.LatencyHeader, 2)
	checkRows(t, report.LatencyCSV, lat, report.LatencyHeader, 200)
	for _, r := range lat {
		if r[5] != harness.StatusOK {
			t.Errorf("row not measured: %v", r)
		}
	}
	meta, _ := os.ReadFile(filepath.Join(out, report.MetadataTXT))
	ns := fmt.Sprintf("gbsrv%d", pid)
	if !strings.Contains(string(meta), "network.server_wrap: ip netns exec "+ns) {
		t.Errorf("metadata.txt does not record the server namespace %s", ns)
	}
	for _, dir := range caseDirs(t, filepath.Join(out, "run-1")) {
		mustHave(t, dir, "case.txt", "processes.txt", "affinity.txt", "channels.txt", "server/nic-before.txt", "client/nic-after.txt")
	}
	list, _ := exec.Command("ip", "netns", "list").Output()
	for _, n := range []string{ns, fmt.Sprintf("gbcli%d", pid)} {
		if strings.Contains(string(list), n) {
			t.Errorf("namespace %s left behind", n)
		}
	}
}
