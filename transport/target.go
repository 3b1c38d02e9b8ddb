// Targets: the one address syntax that goblin-server, goblin-client and the
// client library share, parsed by ParseTarget:
//
//	uds:///run/goblin/goblin.sock?proto=resp   Unix domain socket
//	tcp://127.0.0.1:6380?proto=resp            TCP (Redis clients connect here)
//	tls://127.0.0.1:6390?proto=resp            TLS over TCP (rediss:// is the same)
//	ring:///dev/shm/goblin?proto=sbe           goblin's shared-memory rings
//	aeron:ipc?proto=sbe                        Aeron IPC
//	aeron:udp?endpoint=10.0.0.1:40123|control=10.0.0.1:40124|proto=sbe
//
// A uds target without a path ("uds://", "uds://?proto=sbe") names the
// default socket (DefaultSocketPath). proto is resp (the default) or sbe. Any other query parameter is kept in
// Params for the transport to interpret; a transport rejects parameters it
// does not know. A bare path (starting with "/" or ".") means a Unix socket,
// and a bare host:port means TCP, as redis-cli users expect.

package transport

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/goblin-kv/goblin/proto"
)

// Scheme is the transport a target names.
type Scheme string

// The transports goblin knows.
const (
	UDS Scheme = "uds"
	TCP Scheme = "tcp"
	// TLS is TCP carrying TLS (rediss:// parses to it).
	TLS   Scheme = "tls"
	Ring  Scheme = "ring"
	Aeron Scheme = "aeron"
)

// DefaultTCPPort is the TCP port goblin listens on when a tcp target names
// none (Redis's 6379 plus one, so both can run side by side).
const DefaultTCPPort = "6380"

// ErrTargetSyntax is wrapped by every parse error.
var ErrTargetSyntax = errors.New("target: bad syntax")

// ErrTargetParam is wrapped by a transport's error for a target parameter it
// does not know or cannot use (tcp://h:p?nosuch=1), so that a program can
// tell a bad target from a server that cannot be reached.
var ErrTargetParam = errors.New("target: bad parameter")

// Target is one parsed address.
type Target struct {
	Scheme Scheme
	// Path is the socket path (uds) or the ring directory (ring).
	Path string
	// Address is host:port (tcp), or the Aeron media ("ipc" or "udp").
	Address string
	// Proto is the wire protocol spoken over the transport.
	Proto proto.Protocol
	// ProtoSet says the target named its protocol (proto=). Without it
	// Proto is the default, RESP, and a client whose transport learns the
	// listener's protocol at the handshake (ring, Aeron) speaks that one.
	ProtoSet bool
	// Params holds the remaining parameters (for aeron targets, the
	// channel parameters such as endpoint and control).
	Params map[string]string
}

// Default is the target goblin-server listens on and goblin-client dials
// when given none: a Unix socket named goblin.sock in a directory only the
// user can write (see DefaultSocketPath).
func DefaultTarget() Target {
	return Target{Scheme: UDS, Path: DefaultSocketPath(), Proto: proto.RESP}
}

// DefaultSocketPath is the Unix socket path of Default, in a directory no
// other user can write, so no one else can put a socket there first:
//
//   - $XDG_RUNTIME_DIR/goblin.sock when XDG_RUNTIME_DIR is set (the
//     login's private runtime directory, 0700);
//   - /run/goblin/goblin.sock for root;
//   - otherwise $TMPDIR/goblin-UID/goblin.sock (TMPDIR defaulting to /tmp):
//     a directory of the user's own that goblin-server creates 0700, and
//     refuses to use when another user owns it or may write to it.
func DefaultSocketPath() string {
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" {
		return filepath.Join(dir, "goblin.sock")
	}
	uid := os.Geteuid()
	if uid == 0 {
		return "/run/goblin/goblin.sock"
	}
	return filepath.Join(os.TempDir(), "goblin-"+strconv.Itoa(uid), "goblin.sock")
}

// Parse parses s. See the package documentation for the syntax.
func ParseTarget(s string) (Target, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return Target{}, fmt.Errorf("%w: empty target", ErrTargetSyntax)
	case strings.HasPrefix(s, "aeron:"):
		return parseAeronTarget(s)
	case strings.HasPrefix(s, "/") || strings.HasPrefix(s, "."):
		return Target{Scheme: UDS, Path: s, Proto: proto.RESP}, nil
	case !strings.Contains(s, "://"):
		if sch, rest, ok := strings.Cut(s, ":"); ok && (sch == string(UDS) || sch == string(TCP) || sch == string(Ring)) {
			// ring:/dev/shm/goblin, uds:/x.sock, tcp:h:p: a typo, not the
			// TCP host "ring".
			want := sch + ":///" + strings.TrimLeft(rest, "/")
			if sch == string(TCP) {
				want = "tcp://" + strings.TrimLeft(rest, "/")
			}
			return Target{}, fmt.Errorf("%w: %q: %s targets are written %s (scheme, then ://)", ErrTargetSyntax, s, sch, want)
		}
		host, port, err := net.SplitHostPort(s)
		if err == nil {
			if n, perr := strconv.ParseUint(port, 10, 16); perr != nil || (n == 0 && port != "0") {
				return Target{}, fmt.Errorf("%w: %q: port %q of host %q is not a number from 0 to 65535 (want scheme://…, a socket path or host:port)", ErrTargetSyntax, s, port, host)
			}
			return Target{Scheme: TCP, Address: s, Proto: proto.RESP}, nil
		}
		return Target{}, fmt.Errorf("%w: %q: want scheme://…, a socket path or host:port", ErrTargetSyntax, s)
	}
	u, err := url.Parse(s)
	if err != nil {
		return Target{}, fmt.Errorf("%w: %q: %w", ErrTargetSyntax, s, err)
	}
	t := Target{Scheme: Scheme(u.Scheme), Params: map[string]string{}}
	if u.Scheme == "rediss" {
		t.Scheme = TLS
	}
	for k, v := range u.Query() {
		t.Params[k] = v[len(v)-1]
	}
	if err := t.takeProto(); err != nil {
		return Target{}, err
	}
	switch t.Scheme {
	case UDS, Ring:
		t.Path = u.Path
		if u.Host != "" {
			return Target{}, fmt.Errorf("%w: %q: %s targets take a path (%s:///path), not a host", ErrTargetSyntax, s, t.Scheme, t.Scheme)
		}
		if t.Path == "" && t.Scheme == UDS {
			t.Path = DefaultSocketPath() // "uds://": the default socket
		}
		if t.Path == "" {
			return Target{}, fmt.Errorf("%w: %q: missing path", ErrTargetSyntax, s)
		}
	case TCP, TLS:
		t.Address = u.Host
		if t.Address == "" {
			return Target{}, fmt.Errorf("%w: %q: missing host", ErrTargetSyntax, s)
		}
		if u.Port() == "" {
			t.Address = net.JoinHostPort(u.Hostname(), DefaultTCPPort)
		}
	default:
		return Target{}, fmt.Errorf("%w: %q: unknown scheme %q (want uds, tcp, tls, ring or aeron)", ErrTargetSyntax, s, u.Scheme)
	}
	if len(t.Params) == 0 {
		t.Params = nil
	}
	return t, nil
}

// parseAeron parses aeron:ipc?k=v|k=v (Aeron's own separator) or with "&".
func parseAeronTarget(s string) (Target, error) {
	rest := strings.TrimPrefix(s, "aeron:")
	media, query, _ := strings.Cut(rest, "?")
	if media != "ipc" && media != "udp" {
		return Target{}, fmt.Errorf("%w: %q: aeron media must be ipc or udp", ErrTargetSyntax, s)
	}
	t := Target{Scheme: Aeron, Address: media, Params: map[string]string{}}
	if query != "" {
		for _, kv := range strings.FieldsFunc(query, func(r rune) bool { return r == '|' || r == '&' }) {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return Target{}, fmt.Errorf("%w: %q: parameter %q is not key=value", ErrTargetSyntax, s, kv)
			}
			t.Params[k] = v
		}
	}
	if err := t.takeProto(); err != nil {
		return Target{}, err
	}
	if media == "udp" && t.Params["endpoint"] == "" {
		return Target{}, fmt.Errorf("%w: %q: aeron:udp needs endpoint=HOST:PORT", ErrTargetSyntax, s)
	}
	if len(t.Params) == 0 {
		t.Params = nil
	}
	return t, nil
}

func (t *Target) takeProto() error {
	t.Proto = proto.RESP
	if p, ok := t.Params["proto"]; ok {
		pr, err := proto.Parse(p)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrTargetSyntax, err)
		}
		t.Proto, t.ProtoSet = pr, true
		delete(t.Params, "proto")
	}
	return nil
}

// String formats t in the syntax Parse accepts. It always names the
// protocol, so ParseTarget(t.String()) is t with ProtoSet true.
func (t Target) String() string {
	var b strings.Builder
	keys := make([]string, 0, len(t.Params))
	for k := range t.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	sep := "&"
	switch t.Scheme {
	case Aeron:
		b.WriteString("aeron:" + t.Address)
		sep = "|"
	case TCP, TLS:
		b.WriteString(string(t.Scheme) + "://" + t.Address)
	default:
		// Escaped, so a path holding '?', '#' or '%' parses back to itself.
		b.WriteString(string(t.Scheme) + "://" + (&url.URL{Path: t.Path}).EscapedPath())
	}
	b.WriteString("?proto=" + t.Proto.String())
	for _, k := range keys {
		b.WriteString(sep + k + "=" + t.Params[k])
	}
	return b.String()
}
