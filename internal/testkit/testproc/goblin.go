package testproc

import (
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// GoblinServerKeys are the keys of the map StartGoblinServer returns:
// transport scheme, then the protocol.
var GoblinServerKeys = []string{"uds/resp", "uds/sbe", "tcp/resp", "tcp/sbe"}

// StartGoblinServer builds and starts the real goblin-server listening on a
// Unix socket (in a test temp dir) and a loopback TCP port (port 0) in each
// protocol, with metrics off and extra flags appended, waits for it to log
// msg=ready, and returns the targets it logged as listening (the
// msg=listening target=... lines), keyed as in GoblinServerKeys. The
// server is stopped in tb.Cleanup.
func StartGoblinServer(tb testing.TB, extra ...string) map[string]string {
	tb.Helper()
	bin := Build(tb, "./cmd/goblin-server")
	dir := tb.TempDir()
	args := append([]string{"--metrics", "off", "--dir", dir, // never the default state directory's snapshot
		"--listen", "uds://" + filepath.Join(dir, "resp.sock") + "?proto=resp",
		"--listen", "uds://" + filepath.Join(dir, "sbe.sock") + "?proto=sbe",
		"--listen", "tcp://127.0.0.1:0?proto=resp", "--listen", "tcp://127.0.0.1:0?proto=sbe"}, extra...)
	p := Start(tb, bin, args...)
	p.WaitLog(tb, `msg=ready`, 60*time.Second)
	out := map[string]string{}
	for _, t := range ListeningTargets(p.Log()) {
		if k := targetKey(t); k != "" {
			out[k] = t
		}
	}
	for _, k := range GoblinServerKeys {
		if out[k] == "" {
			tb.Fatalf("goblin-server did not log a %s listener:\n%s", k, p.Log())
		}
	}
	return out
}

// listeningRe matches goblin-server's log line for a bound listener; slog's
// text handler quotes the value when it holds '=' or spaces.
var listeningRe = regexp.MustCompile(`msg=listening target=("(?:[^"\\]|\\.)*"|\S+)`)

// ListeningTargets returns the targets in a goblin-server log's
// msg=listening lines, in log order, unquoted.
func ListeningTargets(log string) []string {
	var out []string
	for _, m := range listeningRe.FindAllStringSubmatch(log, -1) {
		t := m[1]
		if strings.HasPrefix(t, `"`) {
			u, err := strconv.Unquote(t)
			if err != nil {
				continue
			}
			t = u
		}
		out = append(out, t)
	}
	return out
}

// targetKey returns "scheme/proto" for a target such as
// "tcp://127.0.0.1:6379?proto=resp", or "" if it has no proto.
func targetKey(t string) string {
	u, err := url.Parse(t)
	if err != nil || u.Scheme == "" {
		return ""
	}
	proto := u.Query().Get("proto")
	if proto == "" {
		return ""
	}
	return u.Scheme + "/" + proto
}
