package command

import (
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/argv"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/proto/sbe"
	"github.com/goblin-kv/goblin/reply"
	"github.com/goblin-kv/goblin/request"
	"github.com/goblin-kv/goblin/store"
)

// DefaultDatabases is how many databases an engine has unless
// Options.Databases says otherwise: Redis's default.
const DefaultDatabases = 16

// DefaultVersion is the Redis version goblin reports in HELLO and INFO, so
// clients that switch features on the server's version treat goblin like
// the Redis 7.0 whose commands it answers.
const DefaultVersion = "7.0.0"

// maxKeptScratch caps the buffer the engine keeps after serving a large
// value; bigger buffers are dropped so one large GET does not pin memory.
const maxKeptScratch = 1 << 20

// maxKeptArgs caps the argument array the engine keeps after a RESP
// command with many arguments.
const maxKeptArgs = 4096

// InfoFunc appends an INFO section the engine does not own ("server" or
// "clients") in INFO's format: "# Server\r\nkey:value\r\n...". section is
// lower case. It returns dst unchanged for a section it does not provide.
type InfoFunc func(dst []byte, section string) []byte

// Options configure an Engine. The zero value works.
type Options struct {
	// RequirePass, when set, makes every command but AUTH, HELLO and QUIT
	// answer NOAUTH until the client authenticates with this password (as
	// the "default" user).
	RequirePass string
	// Clock is the time source for relative expiry (EX, PX, EXPIRE); it
	// must be the store's clock. Default store.SystemClock.
	Clock store.Clock
	// Limits bound RESP commands (bulk length, argument count, inline
	// length); the zero value means Redis's defaults.
	Limits resp.Limits
	// MaxFrame bounds an SBE frame on streams, header included; default
	// sbe.DefaultMaxFrame.
	MaxFrame int
	// Info adds the "server" and "clients" sections to INFO. When nil the
	// engine writes a minimal server section and no clients section.
	Info InfoFunc
	// Version is the Redis version reported by HELLO and INFO; default
	// DefaultVersion.
	Version string
	// Databases is how many numbered databases SELECT can choose from
	// (Redis's "databases"); default 16. Database 0 is the store given to
	// NewEngine; the others are created on first use as its siblings,
	// sharing its memory cap.
	Databases int
	// Config answers CONFIG GET for parameters beyond the engine's own
	// (save, appendonly, databases). It appends name/value pairs for
	// parameters matching the glob pattern and returns the extended
	// slice. Optional.
	Config func(pairs [][2]string, pattern string) [][2]string
}

// Stats are one transport's counters. Only the loop goroutine writes them
// (plain, non-atomic increments); the server copies them and publishes the
// copies to its metrics.
type Stats struct {
	Commands       [request.NumOps]uint64 // requests executed, by Op (unknown commands at OpNone)
	Errors         uint64                 // error replies (protocol errors included)
	ProtocolErrors uint64                 // malformed requests that closed the connection
}

// Session is one client's state. Create it with NewSession when the client
// connects; the loop goroutine owns it.
type Session struct {
	// Protocol is the protocol the client speaks.
	Protocol proto.Protocol
	// Stats receives the client's counters; usually shared by every
	// session of one transport. Must not be nil.
	Stats *Stats

	// ID is the client's id, reported by HELLO; the server assigns it.
	ID uint64

	db     int // the selected database
	authed bool
	quit   bool
	resp3  bool // HELLO 3: replies in RESP3
	name   []byte

	// authFails counts wrong passwords (AUTH, HELLO AUTH) while a password
	// is required; failedAuth ends a ServeStream call after one, so the
	// transport can delay the client's next guess (see AuthFailures).
	authFails  uint64
	failedAuth bool

	tx    txState // MULTI's queue and WATCH's keys (cmd_tx.go)
	index int     // in Engine.sessions, -1 when not listed

	// The partial request at the front of the stream, so a request that
	// arrives in many pieces is parsed once, not once per piece.
	parser resp.Parser
	frames sbe.FrameReader
}

// Buffered returns the bytes of memory the session holds for a partial
// request (the positions of a long RESP command's arguments).
func (s *Session) Buffered() int { return s.parser.Buffered() }

// Examined returns the bytes the session's stream parser has examined (a
// test's measure of parsing work; see resp.Parser.Examined).
func (s *Session) Examined() uint64 { return s.parser.Examined() + s.frames.Examined() }

// NewSession returns the state of a newly connected client speaking p that
// counts into st (nil gets a private Stats).
func NewSession(p proto.Protocol, st *Stats) *Session {
	if st == nil {
		st = new(Stats)
	}
	return &Session{Protocol: p, Stats: st, tx: txState{slot: -1}, index: -1}
}

// Open returns the session of a newly connected client speaking p that
// counts into st (nil: a private Stats), with the next client id; the
// engine lists it (CLIENT LIST) until Close.
func (e *Engine) Open(p proto.Protocol, st *Stats) *Session {
	s := NewSession(p, st)
	e.nextID++
	s.ID = e.nextID
	s.index = len(e.sessions)
	e.sessions = append(e.sessions, s)
	return s
}

// Close releases what the engine keeps for a session whose client has
// gone: its place in the client list and its watched keys. The transport
// calls it (through the server's session) when the connection closes.
func (e *Engine) Close(s *Session) {
	e.endTx(s)
	if i := s.index; i >= 0 && i < len(e.sessions) && e.sessions[i] == s {
		last := len(e.sessions) - 1
		e.sessions[i] = e.sessions[last]
		e.sessions[i].index = i
		e.sessions[last] = nil
		e.sessions = e.sessions[:last]
	}
	s.index = -1
}

// Name returns the name the client gave with CLIENT SETNAME (nil if none).
// The slice is the session's; do not keep it.
func (s *Session) Name() []byte { return s.name }

// Authenticated reports whether the client has authenticated with AUTH or
// HELLO ... AUTH.
func (s *Session) Authenticated() bool { return s.authed }

// AuthFailures returns how many wrong passwords the client has sent while
// the server requires one. ServeStream returns after the request that
// failed, leaving the client's further requests unconsumed, so a transport
// that sees the count rise can hold the client back before its next guess
// (the engine itself never waits).
func (s *Session) AuthFailures() uint64 { return s.authFails }

// Engine decodes, executes and encodes requests against one store. It is
// used from the loop goroutine only.
type Engine struct {
	st    *store.Store   // the database of the request being served
	dbs   []*store.Store // the numbered databases; nil until first used
	o     Options
	clock store.Clock
	codec sbe.Codec

	// Scratch state reused by every request (single goroutine).
	args      [][]byte        // RESP arguments, slices into the input
	dec       argv.Decoder    // RESP command syntax
	req       request.Request // the request being served
	res       reply.Reply     // the reply before encoding
	sbeArgs   [][]byte        // backing array for SBE requests' Args
	scratch   []byte          // values read from the store
	errBuf    []byte          // error texts
	ints      []int           // key positions (COMMAND GETKEYS)
	stack     []openAgg       // aggregates being built (build.go)
	fixes     []fixup         // values in scratch to point at (build.go)
	version   []byte          // Options.Version, for HELLO
	passBytes []byte          // Options.RequirePass
	stats     store.Stats
	total     uint64          // commands processed, all sessions (INFO)
	tickNext  int             // the database Tick starts with
	num       []byte          // numbers formatted for a reply, LCS's subsequence
	watchers  []*Session      // sessions with watched keys
	sessions  []*Session      // every open session (Open, Close)
	nextID    uint64          // the last client id given
	txReq     request.Request // a queued command being run by EXEC
	txArgs    [][]byte
	txItems   []reply.Item // EXEC's reply being built
	txVals    []byte
	lcsTable  []uint32 // LCS's dynamic programme
	ld        longDouble
}

// NewEngine returns an engine executing against st.
func NewEngine(st *store.Store, o Options) *Engine {
	if o.Clock == nil {
		o.Clock = store.SystemClock{}
	}
	if o.Version == "" {
		o.Version = DefaultVersion
	}
	if o.MaxFrame <= 0 {
		o.MaxFrame = sbe.DefaultMaxFrame
	}
	if o.Databases <= 0 {
		o.Databases = DefaultDatabases
	}
	return &Engine{
		st: st, dbs: append(make([]*store.Store, 0, o.Databases), st), o: o, clock: o.Clock,
		args:    make([][]byte, 0, 16),
		scratch: make([]byte, 0, 4096),
		errBuf:  make([]byte, 0, 256),
		dec:     argv.Decoder{Text: make([]byte, 0, 256)},
		sbeArgs: make([][]byte, 0, 16),
		res:     reply.Reply{Items: make([]reply.Item, 0, 16)},
	}
}

// ServeStream executes every complete request at the start of in, in
// order, and appends each reply to out (RESP, or SOFH-framed SBE, per the
// session's protocol). consumed is how many bytes of in were used; the rest
// is a partial request to offer again, from its first byte, with more
// bytes: the session remembers how far it parsed it and resumes there (see
// resp.Parser). closeConn asks the
// transport to send the replies and close: after QUIT, or after a
// malformed request, whose protocol error is the last reply and of which
// nothing was executed.
func (e *Engine) ServeStream(s *Session, in, out []byte) (consumed int, replies []byte, closeConn bool) {
	return e.ServeStreamLimit(s, in, out, 0)
}

// ServeStreamLimit is ServeStream that stops early, leaving the requests
// after it unconsumed, once the replies it appended to out reach limit
// bytes (0: no limit). It always executes at least one request, however
// large its reply; a transport uses it to bound what one client's
// requests make the loop produce at once.
func (e *Engine) ServeStreamLimit(s *Session, in, out []byte, limit int) (consumed int, replies []byte, closeConn bool) {
	if limit > 0 {
		limit += len(out) // stop once out reaches this length
	} else {
		limit = int(^uint(0) >> 1)
	}
	s.failedAuth = false
	if s.Protocol == proto.SBE {
		return e.serveSBEStream(s, in, out, limit)
	}
	for consumed < len(in) && !s.quit && !s.failedAuth && len(out) < limit {
		args, n, err := s.parser.ReadCommand(in[consumed:], e.args, &e.o.Limits)
		e.args = args[:0]
		if cap(args) > maxKeptArgs {
			e.args = nil // one huge command must not pin its argument array
		}
		if err != nil {
			return consumed, e.respProtocolError(s, out, err), true
		}
		if n == 0 {
			break
		}
		consumed += n
		if len(args) == 0 {
			continue
		}
		out = e.serveRESP(s, args, out)
	}
	return consumed, out, s.quit
}

// ServeMessage executes the one request in msg (a RESP command, or a bare
// SBE message without SOFH) and appends its reply to out. closeConn as for
// ServeStream.
func (e *Engine) ServeMessage(s *Session, msg, out []byte) (replies []byte, closeConn bool) {
	if s.Protocol == proto.SBE {
		if err := e.decodeSBE(msg); err != nil {
			return e.sbeProtocolError(s, out, err, false), true
		}
		return e.serveSBE(s, msg, out, false), s.quit
	}
	args, n, err := resp.ReadCommand(msg, e.args, &e.o.Limits)
	e.args = args[:0]
	switch {
	case err != nil:
		return e.respProtocolError(s, out, err), true
	case n == 0:
		return e.respProtocolError(s, out, errIncompleteMessage), true
	case n != len(msg):
		return e.respProtocolError(s, out, errTrailingBytes), true
	case len(args) == 0:
		return e.respProtocolError(s, out, errEmptyMessage), true
	}
	return e.serveRESP(s, args, out), s.quit
}

// Errors for RESP on message transports, where one message must hold
// exactly one command.
var (
	errIncompleteMessage = &resp.ProtocolError{Text: "Protocol error: incomplete command in message"}
	errTrailingBytes     = &resp.ProtocolError{Text: "Protocol error: bytes after the command in message"}
	errEmptyMessage      = &resp.ProtocolError{Text: "Protocol error: empty message"}
)

func (e *Engine) serveRESP(s *Session, args [][]byte, out []byte) []byte {
	e.resetResult()
	ok := e.dec.Decode(&e.req, args)
	switch {
	case !ok && !e.dec.Rejected && s.tx.on:
		e.queued(s, &e.req, false, args, nil) // queued: EXEC answers its error
	case !ok && s.tx.on && e.req.Op == request.OpExec:
		e.execAbort(s, e.dec.Text) // EXEC refused inside MULTI ends the transaction
	case !ok:
		e.setError(e.dec.Status, e.dec.Text)
		if s.tx.on {
			s.tx.abort = true
		}
	case s.tx.on && e.queued(s, &e.req, false, args, nil):
	default:
		e.execute(s, &e.req)
	}
	e.count(s, e.req.Op)
	return e.encodeRESP(out, s.resp3)
}

func (e *Engine) serveSBEStream(s *Session, in, out []byte, limit int) (int, []byte, bool) {
	consumed := 0
	for consumed < len(in) && !s.quit && !s.failedAuth && len(out) < limit {
		msg, n, err := s.frames.ReadFrame(in[consumed:], e.o.MaxFrame)
		if err != nil {
			return consumed, e.sbeProtocolError(s, out, err, true), true
		}
		if n == 0 {
			break
		}
		if err := e.decodeSBE(msg); err != nil {
			return consumed, e.sbeProtocolError(s, out, err, true), true
		}
		consumed += n
		out = e.serveSBE(s, msg, out, true)
	}
	return consumed, out, s.quit
}

// decodeSBE decodes msg into e.req. RESP decoding may have pointed
// e.req.Args into its own argument slice; SBE decoding gets a backing array
// of its own so the two never share one.
func (e *Engine) decodeSBE(msg []byte) error {
	e.req.Args = e.sbeArgs[:0]
	err := e.codec.DecodeRequest(msg, &e.req)
	e.sbeArgs = e.req.Args[:0]
	return err
}
