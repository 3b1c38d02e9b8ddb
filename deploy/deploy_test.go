package deploy

import (
	"bufio"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

func TestMain(m *testing.M) { testproc.Main(m) }

// freePort asks the kernel for a free TCP port on loopback.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// localConf rewrites a shipped configuration file for a test: its
// directories into dir, its ports to free loopback ones. It returns the
// file's path and the metrics address.
func localConf(t *testing.T, src, dir string) (path, metrics string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	metrics = "127.0.0.1:" + strconv.Itoa(freePort(t))
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "listen" && strings.HasPrefix(f[1], "tcp://"):
			line = "listen tcp://127.0.0.1:" + strconv.Itoa(freePort(t))
		case len(f) == 2 && f[0] == "listen" && strings.HasPrefix(f[1], "uds://"):
			line = "listen uds://" + filepath.Join(dir, "goblin.sock") + "?proto=resp"
		case len(f) == 2 && f[0] == "dir":
			line = "dir " + dir
		case len(f) == 2 && f[0] == "metrics":
			line = "metrics " + metrics
		}
		out = append(out, line)
	}
	path = filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(path, []byte(strings.Join(out, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, metrics
}

// TestShippedConfigsStart: the configuration files the unit and the image
// ship are accepted by goblin-server (an unknown directive fails the
// start) and serve, with only their paths and ports changed.
func TestShippedConfigsStart(t *testing.T) {
	bin := testproc.Build(t, "./cmd/goblin-server")
	for _, src := range []string{"systemd/goblin.conf", "container/goblin.conf"} {
		t.Run(filepath.Dir(src), func(t *testing.T) {
			t.Parallel()
			conf, metrics := localConf(t, src, t.TempDir())
			p := testproc.Start(t, bin, conf)
			p.WaitLog(t, `"?msg"?[=:]"?ready`, 60*time.Second)
			body := get(t, "http://"+metrics+"/readyz")
			if strings.TrimSpace(body) != "ok" {
				t.Errorf("/readyz: %q", body)
			}
		})
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	var body string
	testkit.Eventually(t, 30*time.Second, "GET "+url+" to answer 200", func() (bool, string) {
		r, err := http.Get(url)
		if err != nil {
			return false, err.Error()
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		body = string(b)
		return r.StatusCode == 200, r.Status + ": " + body
	})
	return body
}

// exprs returns every PromQL expression of the dashboard and the rules.
func exprs(t *testing.T) (dash, rules []string) {
	t.Helper()
	b, err := os.ReadFile("grafana/goblin-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID    string `json:"uid"`
		Title  string `json:"title"`
		Panels []struct {
			ID      int    `json:"id"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	if d.UID == "" || d.Title == "" || len(d.Panels) == 0 {
		t.Fatalf("the dashboard lacks a uid, a title or panels")
	}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] || p.Title == "" || len(p.Targets) == 0 {
			t.Errorf("panel %d %q: duplicate id, no title or no query", p.ID, p.Title)
		}
		ids[p.ID] = true
		for _, q := range p.Targets {
			dash = append(dash, q.Expr)
		}
	}
	b, err = os.ReadFile("prometheus/goblin-alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Expr        string            `yaml:"expr"`
				For         string            `yaml:"for"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true) // a misspelt key is an error, as promtool makes it
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("the alerting rules: %v", err)
	}
	for _, g := range r.Groups {
		for _, a := range g.Rules {
			if a.Alert == "" || a.Expr == "" || a.Labels["severity"] == "" || a.Annotations["summary"] == "" {
				t.Errorf("rule %q: want alert, expr, a severity label and a summary", a.Alert)
			}
			if a.For != "" {
				if _, err := time.ParseDuration(a.For); err != nil {
					t.Errorf("rule %q: for %q: %v", a.Alert, a.For, err)
				}
			}
			rules = append(rules, a.Expr)
		}
	}
	if len(rules) == 0 {
		t.Fatal("no alerting rules")
	}
	return dash, rules
}

var metricName = regexp.MustCompile(`\b(goblin_[a-z0-9_]+|process_[a-z0-9_]+|go_[a-z0-9_]+)\b`)

// TestDashboardAndAlertsUseExportedMetrics: every metric the dashboard and
// the alerting rules query is one a running goblin-server exports and
// docs/metrics.md documents, so a renamed series cannot leave a panel
// empty or an alert that never fires.
func TestDashboardAndAlertsUseExportedMetrics(t *testing.T) {
	dash, rules := exprs(t)
	want := map[string]bool{}
	for _, e := range append(dash, rules...) {
		for _, m := range metricName.FindAllString(e, -1) {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if strings.HasPrefix(m, "goblin_command_duration_seconds") {
					m = strings.TrimSuffix(m, suffix)
				}
			}
			want[m] = true
		}
	}
	dir := t.TempDir()
	port := freePort(t)
	metrics := "127.0.0.1:" + strconv.Itoa(freePort(t))
	bin := testproc.Build(t, "./cmd/goblin-server")
	p := testproc.Start(t, bin, "--listen", "tcp://127.0.0.1:"+strconv.Itoa(port), "--metrics", metrics, "--dir", dir)
	p.WaitLog(t, `msg=ready`, 60*time.Second)
	// Traffic, so the families that appear once used are there.
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprint(c, "SET k v\r\nGET k\r\nGET nokey\r\nNOSUCHCOMMAND\r\n")
	r := bufio.NewReader(c)
	for i := 0; i < 4; i++ {
		if _, err := r.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	docs, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	exported := map[string]bool{}
	testkit.Eventually(t, 30*time.Second, "every queried metric to be exported", func() (bool, string) {
		for _, line := range strings.Split(get(t, "http://"+metrics+"/metrics"), "\n") {
			if f := strings.Fields(line); len(f) >= 3 && f[0] == "#" && f[1] == "TYPE" {
				exported[f[2]] = true
			}
		}
		var missing []string
		for m := range want {
			if !exported[m] {
				missing = append(missing, m)
			}
		}
		slices.Sort(missing)
		return len(missing) == 0, fmt.Sprintf("not exported: %v", missing)
	})
	for m := range want {
		if strings.HasPrefix(m, "goblin_") && !strings.Contains(string(docs), "`"+m) {
			t.Errorf("%s is queried but docs/metrics.md does not document it", m)
		}
	}
	if len(want) < 20 {
		t.Errorf("only %d metrics queried: the expression scan is broken", len(want))
	}
}

// TestSystemdUnitVerifies runs systemd-analyze verify over the unit (with
// ExecStart pointing at a freshly built server): an unknown key, a bad
// value or a missing binary fails it.
func TestSystemdUnitVerifies(t *testing.T) {
	sa := testkit.Need(t, "systemd-analyze", "checking the systemd unit")
	bin := testproc.Build(t, "./cmd/goblin-server")
	b, err := os.ReadFile("systemd/goblin.service")
	if err != nil {
		t.Fatal(err)
	}
	const shipped = "ExecStart=/usr/local/bin/goblin-server "
	if !strings.Contains(string(b), shipped) {
		t.Fatalf("the unit has no %q line", shipped)
	}
	unit := strings.Replace(string(b), shipped, "ExecStart="+bin+" ", 1)
	for _, want := range []string{"Type=notify", "WatchdogSec=", "User=goblin", "StateDirectory=goblin", "RuntimeDirectory=goblin", "NoNewPrivileges=yes"} {
		if !strings.Contains(unit, "\n"+want) {
			t.Errorf("the unit lacks %s", want)
		}
	}
	path := filepath.Join(t.TempDir(), "goblin.service")
	if err := os.WriteFile(path, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(sa, "verify", path).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	// The paths the unit's configuration uses are the directories the unit
	// makes for the server.
	conf, err := os.ReadFile("systemd/goblin.conf")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"dir /var/lib/goblin", "listen uds:///run/goblin/"} {
		if !strings.Contains(string(conf), want) {
			t.Errorf("systemd/goblin.conf lacks %q (StateDirectory/RuntimeDirectory)", want)
		}
	}
}

// TestContainerfile checks the image definition as far as this machine
// can: its build stage's command makes a static binary, the final stage
// runs as a non-root user, and what it copies exists. With a reachable
// Docker daemon it also builds the image and runs goblin-server --version
// in it.
func TestContainerfile(t *testing.T) {
	b, err := os.ReadFile("container/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var froms, users []string
	var build string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch f[0] {
		case "FROM":
			froms = append(froms, line)
		case "USER":
			users = append(users, f[1])
		case "RUN":
			if strings.Contains(line, "go build") {
				build = line
			}
		case "COPY":
			if !strings.HasPrefix(f[1], "--from") && f[1] != "." && !strings.HasPrefix(f[1], "go.") {
				if _, err := os.Stat(filepath.Join("..", f[1])); err != nil {
					t.Errorf("COPY %s: %v", f[1], err)
				}
			}
		}
	}
	if len(froms) < 2 {
		t.Errorf("not a multi-stage build: %q", froms)
	}
	if len(users) == 0 || strings.HasPrefix(users[len(users)-1], "0") || strings.HasPrefix(users[len(users)-1], "root") {
		t.Errorf("the final stage runs as %q, want a non-root user", users)
	}
	if !strings.Contains(build, "CGO_ENABLED=0") {
		t.Fatalf("the build step %q does not disable cgo", build)
	}
	// The build stage's command, here: the result must need no loader.
	out := filepath.Join(t.TempDir(), "goblin-server")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, "./cmd/goblin-server")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if o, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, o)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the binary asks for a dynamic loader: distroless/static cannot run it")
		}
	}
	if o, err := exec.Command(out, "--version").Output(); err != nil || !strings.HasPrefix(string(o), "goblin-server v=") {
		t.Errorf("the static binary's --version: %v %q", err, o)
	}
	if docker, err := exec.LookPath("docker"); err == nil && exec.Command(docker, "info").Run() == nil {
		tag := "goblin-deploy-test:" + strconv.Itoa(os.Getpid())
		if o, err := exec.Command(docker, "build", "-q", "-f", "container/Dockerfile", "-t", tag, "..").CombinedOutput(); err != nil {
			t.Fatalf("docker build: %v\n%s", err, o)
		}
		defer exec.Command(docker, "rmi", "-f", tag).Run()
		if o, err := exec.Command(docker, "run", "--rm", tag, "--version").Output(); err != nil || !strings.HasPrefix(string(o), "goblin-server v=") {
			t.Errorf("the image's --version: %v %q", err, o)
		}
	} else {
		t.Log("no Docker daemon here: the image definition was checked, not built")
	}
}
