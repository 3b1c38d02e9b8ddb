package uds

// This file is a listener's configuration: Config, its defaults, and the
// Config a uds:// or tcp:// target asks for.

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/transport"
)

// Defaults for the zero values of Config.
const (
	DefaultMaxClients = 10000
	DefaultMaxOutput  = 32 << 20
	DefaultMaxInput   = 64 << 20
	DefaultSocketMode = os.FileMode(0o660)
	DefaultCheckEvery = 16
	// DefaultStallTimeout is how long a client may leave MaxOutput bytes of
	// replies unread before it is disconnected.
	DefaultStallTimeout = 5 * time.Second
	DefaultReadBufSize  = 16 << 10
	// DefaultPassOutput is the reply bytes one client's requests may
	// produce per Poll before its further requests wait for the next.
	DefaultPassOutput = 256 << 10
	// shrinkAbove is the buffer capacity above which an emptied input or
	// output buffer is dropped rather than kept, so one large value does
	// not pin megabytes per client.
	shrinkAbove = 256 << 10
	// sharedReadSize is the listener's shared read buffer: a client whose
	// requests all complete within one read never needs one of its own.
	sharedReadSize = 64 << 10
	// sharedWriteKeep is the most capacity the listener's shared reply
	// buffer keeps after a large reply passed through it.
	sharedWriteKeep = 1 << 20
	// idleRelease is how long a client must be quiet before the buffers
	// it kept (up to shrinkAbove each) are released.
	idleRelease = 2 * time.Second
	// readBudget bounds the bytes read from one client per readiness
	// event, so one fast sender cannot starve the others.
	readBudget = 1 << 20
	// scanEvery is how often Poll looks for idle and stalled clients.
	scanEvery = 100 * time.Millisecond
	// acceptBatch bounds the clients accepted per readiness event.
	acceptBatch = 64
	// eventBatch is the number of epoll events taken per check.
	eventBatch = 256
)

// Config describes one listener. Network and Address and Handler are
// required; every other zero value picks the default.
type Config struct {
	// Network is "unix" or "tcp".
	Network string
	// Address is the socket path (unix) or host:port (tcp; port 0 picks a
	// free port, see Server.Addr).
	Address string
	// Proto is the protocol the listener announces (its Name and Target).
	// Each connection's protocol is recognised from its first bytes
	// (proto.Sniff), so RESP and SOFH-framed SBE clients are both served
	// whatever Proto says.
	Proto proto.Protocol
	// Handler executes the requests; it opens each client's session once
	// the client's first bytes tell its protocol.
	Handler transport.StreamHandler
	// MaxClients caps connected clients; further clients are told so (RESP)
	// and closed. Default DefaultMaxClients.
	MaxClients int
	// MaxOutput caps the reply bytes queued for one client. At the cap the
	// server stops reading and executing the client's requests until it
	// reads its replies; a client that leaves the cap unread for
	// StallTimeout is disconnected as a slow consumer. Replies may pass the
	// cap by what one small batch of requests produces. Default
	// DefaultMaxOutput.
	MaxOutput int
	// StallTimeout: see MaxOutput. Default DefaultStallTimeout.
	StallTimeout time.Duration
	// MaxInput caps the bytes of one incomplete request held for a client;
	// past it the client is told so (in its protocol) and disconnected.
	// Default DefaultMaxInput.
	MaxInput int
	// PassOutput caps the reply bytes one client's requests may produce
	// in one Poll: its further requests wait for the next Poll, so a
	// client asking for many large replies cannot hold the loop from the
	// other clients. One request always runs, however large its reply.
	// Default DefaultPassOutput.
	PassOutput int
	// Budget, when set, bounds the buffer memory of the clients of every
	// listener sharing it (see Budget); nil gives the listener a budget
	// of its own without a limit.
	Budget *Budget
	// IdleTimeout disconnects clients silent for that long; 0 never does.
	IdleTimeout time.Duration
	// SocketMode is the Unix socket file's permission bits. Default 0660.
	SocketMode os.FileMode
	// CheckEvery is how many Poll calls pass between two epoll checks
	// while the sockets are quiet (while they are busy, every Poll checks,
	// and the loop asks for a check whenever it goes idle). Default
	// DefaultCheckEvery; 1 checks on every Poll.
	CheckEvery int
	// Logger receives disconnect reasons at debug and warn level; nil
	// discards them.
	Logger *slog.Logger
	// Protected, when set, is asked as each TCP client is accepted from
	// beyond the loopback interface: true (protected mode) refuses the
	// client with command.DeniedProtectedMode, in its listener's protocol,
	// and closes it, as Redis does. Called on the goroutine that polls.
	Protected func() bool
	// TLS, when set, makes a tcp listener serve TLS with the source's
	// current configuration (tls.go: the handshake runs on a goroutine per
	// client, the record layer on the loop, which never waits on it).
	TLS *TLSSource
}

// ConfigFor fills Network, Address and Proto from a uds or tcp target.
func ConfigFor(t transport.Target) (Config, error) {
	c := Config{Proto: t.Proto}
	switch t.Scheme {
	case transport.UDS:
		c.Network, c.Address = "unix", t.Path
	case transport.TCP, transport.TLS:
		c.Network, c.Address = "tcp", t.Address // TLS: the builder sets Config.TLS
	default:
		return c, fmt.Errorf("%w: scheme %q is not uds, tcp or tls", ErrConfig, t.Scheme)
	}
	for k := range t.Params {
		if k != "mode" {
			return c, fmt.Errorf("%w: unknown parameter %q in %s", ErrConfig, k, t)
		}
	}
	if m, ok := t.Params["mode"]; ok {
		if t.Scheme != transport.UDS {
			return c, fmt.Errorf("%w: mode applies to uds targets only", ErrConfig)
		}
		v, err := strconv.ParseUint(m, 8, 32)
		if err != nil || v > 0o777 {
			return c, fmt.Errorf("%w: mode %q is not octal permission bits", ErrConfig, m)
		}
		c.SocketMode = os.FileMode(v)
	}
	return c, nil
}

func (c *Config) ensureDefaults() {
	if c.MaxClients <= 0 {
		c.MaxClients = DefaultMaxClients
	}
	if c.MaxOutput <= 0 {
		c.MaxOutput = DefaultMaxOutput
	}
	if c.MaxInput <= 0 {
		c.MaxInput = DefaultMaxInput
	}
	if c.SocketMode == 0 {
		c.SocketMode = DefaultSocketMode
	}
	if c.CheckEvery <= 0 {
		c.CheckEvery = DefaultCheckEvery
	}
	if c.StallTimeout <= 0 {
		c.StallTimeout = DefaultStallTimeout
	}
	if c.PassOutput <= 0 {
		c.PassOutput = DefaultPassOutput
	}
	if c.Budget == nil {
		c.Budget = new(Budget)
	}
}
