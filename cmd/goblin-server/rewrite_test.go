package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigRewrite: CONFIG REWRITE on a real goblin-server started with
// --config writes what CONFIG SET changed into that file, in place,
// keeping its comments, blank lines and order, adds what the file did not
// set, and a server started again from the file has the new values.
// Without --config it answers Redis's "running without a config file".
func TestConfigRewrite(t *testing.T) {
	t.Parallel()
	needTool(t, "redis-cli")
	conf := filepath.Join(t.TempDir(), "goblin.conf")
	orig := "# goblin test configuration\n\n# memory\nmaxmemory=64mb\n  maxmemory-policy noeviction\n\n# clients\ntimeout 5m\nidle backoff\n"
	if err := os.WriteFile(conf, []byte(orig), 0o640); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, "--config", conf)
	cli := func(s *srv, args ...string) string {
		return strings.TrimSpace(string(runTool(t, nil, "redis-cli", append([]string{"-s", s.sock}, args...)...)))
	}
	for _, set := range [][]string{{"maxmemory", "100mb"}, {"maxmemory-policy", "allkeys-lru"}, {"timeout", "30"}, {"maxclients", "50"}} {
		if got := cli(s, append([]string{"CONFIG", "SET"}, set...)...); got != "OK" {
			t.Fatalf("CONFIG SET %q: %q", set, got)
		}
	}
	if got := cli(s, "CONFIG", "REWRITE"); got != "OK" {
		t.Fatalf("CONFIG REWRITE: %q", got)
	}
	b, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	want := "# goblin test configuration\n\n# memory\nmaxmemory=104857600\n  maxmemory-policy allkeys-lru\n\n# clients\ntimeout 30s\nidle backoff\n" +
		"# added by CONFIG REWRITE\nmaxclients 50\n"
	if string(b) != want {
		t.Fatalf("rewritten file:\n%s\nwant:\n%s", b, want)
	}
	if fi, err := os.Stat(conf); err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("rewritten file's mode: %v, %v; want 0640", fi.Mode(), err)
	}
	// A second rewrite with nothing changed leaves the file as it is.
	if got := cli(s, "CONFIG", "REWRITE"); got != "OK" {
		t.Fatalf("second CONFIG REWRITE: %q", got)
	}
	if b2, _ := os.ReadFile(conf); string(b2) != want {
		t.Fatalf("second rewrite changed the file:\n%s", b2)
	}
	s.p.Stop(startTimeout)

	again := startServer(t, "--config", conf)
	for _, c := range [][2]string{{"maxmemory", "104857600"}, {"maxmemory-policy", "allkeys-lru"}, {"timeout", "30"}, {"maxclients", "50"}} {
		if got := cli(again, "CONFIG", "GET", c[0]); got != c[0]+"\n"+c[1] {
			t.Errorf("after a restart from the rewritten file, CONFIG GET %s: %q", c[0], got)
		}
	}
	without := startServer(t)
	if got := cli(without, "CONFIG", "REWRITE"); got != "ERR The server is running without a config file" {
		t.Errorf("CONFIG REWRITE without --config: %q", got)
	}
}
