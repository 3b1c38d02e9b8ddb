package replication

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
)

// IDLen is the length of a replication id: 40 hex digits.
const IDLen = 40

// DefaultBacklogSize is repl-backlog-size's default, 1 MiB; MinBacklogSize
// is the smallest Redis accepts (CONFIG_REPL_BACKLOG_MIN_SIZE).
const (
	DefaultBacklogSize = 1 << 20
	MinBacklogSize     = 16 << 10
)

// NoID is the replication id shown for an unset previous id
// (master_replid2): forty zeros.
const NoID = "0000000000000000000000000000000000000000"

// NewID returns a fresh random replication id (40 lower-case hex digits).
func NewID() string {
	var b [IDLen / 2]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// State is one node's replication identity and history. The zero value is
// not ready: use NewState. Not safe for concurrent use (the loop owns it).
type State struct {
	// ID is the current replication id (master_replid); ID2 the previous
	// one (master_replid2, NoID when none) valid up to offset SecondOffset
	// (second_repl_offset, -1 when none).
	ID, ID2      string
	SecondOffset int64
	// Offset is master_repl_offset: the stream bytes fed so far. It only
	// moves while a backlog exists, as in Redis.
	Offset int64

	backlog *Backlog
	size    int
}

// NewState returns a state with a fresh id, no previous id, offset 0 and
// no backlog; backlogSize is repl-backlog-size (0: DefaultBacklogSize).
func NewState(backlogSize int) *State {
	s := &State{ID: NewID(), ID2: NoID, SecondOffset: -1}
	s.SetBacklogSize(backlogSize)
	return s
}

// SetBacklogSize changes repl-backlog-size (values under MinBacklogSize
// are raised to it; 0 is the default). A live backlog keeps its newest
// bytes that fit.
func (s *State) SetBacklogSize(n int) {
	if n == 0 {
		n = DefaultBacklogSize
	}
	n = max(n, MinBacklogSize)
	s.size = n
	if s.backlog != nil {
		s.backlog.resize(n)
	}
}

// BacklogSize returns repl-backlog-size.
func (s *State) BacklogSize() int { return s.size }

// Backlog returns the backlog, nil when there is none.
func (s *State) Backlog() *Backlog { return s.backlog }

// CreateBacklog makes the backlog if there is none (the first replica of
// a primary, or a replica after its first sync). A primary that had none
// also takes a fresh id and forgets its previous one, as Redis does, since
// no replica can continue a history it did not keep.
func (s *State) CreateBacklog(fresh bool) {
	if s.backlog != nil {
		return
	}
	if fresh {
		s.ID, s.ID2, s.SecondOffset = NewID(), NoID, -1
	}
	s.backlog = newBacklog(s.size, s.Offset+1)
}

// FreeBacklog drops the backlog (repl-backlog-ttl after the last replica
// left); like Redis it then takes a new id, so no one continues a history
// this node no longer has.
func (s *State) FreeBacklog() {
	s.backlog = nil
	s.ID, s.ID2, s.SecondOffset = NewID(), NoID, -1
}

// Feed appends stream bytes: to the backlog and the offset. Without a
// backlog nothing moves (Redis counts offsets only while it has one).
func (s *State) Feed(p []byte) {
	if s.backlog == nil {
		return
	}
	s.backlog.append(p)
	s.Offset += int64(len(p))
}

// Continue reports whether a PSYNC for id from offset (the first byte the
// replica lacks) can be served from the backlog: the id is the current one,
// or the previous one and offset is within the part of history both share;
// and the backlog still holds offset.
func (s *State) Continue(id string, offset int64) bool {
	if s.backlog == nil {
		return false
	}
	if id != s.ID && (id != s.ID2 || id == NoID || offset > s.SecondOffset) {
		return false
	}
	b := s.backlog
	return offset >= b.first && offset <= b.first+int64(b.n)
}

// Shift starts a new history after a promotion (REPLICAOF NO ONE): the
// current id becomes the previous one, valid up to Offset+1, and a fresh
// id is taken.
func (s *State) Shift() {
	s.ID2, s.SecondOffset = s.ID, s.Offset+1
	s.ID = NewID()
}

// Adopt takes a primary's id and offset after a full sync: the replica's
// history is now its primary's, the previous id is cleared and the backlog
// restarts empty at offset+1.
func (s *State) Adopt(id string, offset int64) {
	s.ID, s.ID2, s.SecondOffset, s.Offset = id, NoID, -1, offset
	s.backlog = newBacklog(s.size, offset+1)
}

// ChangeID takes a primary's new id after a +CONTINUE <newid> (the
// primary was promoted): the old id becomes the previous one, valid up to
// the current offset+1.
func (s *State) ChangeID(id string) {
	if id == s.ID {
		return
	}
	s.ID2, s.SecondOffset, s.ID = s.ID, s.Offset+1, id
}

// AppendInfo appends INFO replication's history lines, as Redis lays them
// out: master_replid, master_replid2, master_repl_offset,
// second_repl_offset, repl_backlog_active, repl_backlog_size,
// repl_backlog_first_byte_offset, repl_backlog_histlen.
func (s *State) AppendInfo(dst []byte) []byte {
	line := func(k string, v []byte) {
		dst = append(dst, k...)
		dst = append(dst, ':')
		dst = append(dst, v...)
		dst = append(dst, '\r', '\n')
	}
	var num [20]byte
	n := func(v int64) []byte { return strconv.AppendInt(num[:0], v, 10) }
	line("master_replid", []byte(s.ID))
	line("master_replid2", []byte(s.ID2))
	line("master_repl_offset", n(s.Offset))
	line("second_repl_offset", n(s.SecondOffset))
	var active, first, hist int64
	if b := s.backlog; b != nil {
		active, first, hist = 1, b.first, int64(b.n)
	}
	line("repl_backlog_active", n(active))
	line("repl_backlog_size", n(int64(s.size)))
	line("repl_backlog_first_byte_offset", n(first))
	line("repl_backlog_histlen", n(hist))
	return dst
}

// AppendCommand appends words as a RESP multibulk command, the form every
// command in the stream takes.
func AppendCommand(dst []byte, words ...[]byte) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(len(words)), 10)
	dst = append(dst, '\r', '\n')
	for _, w := range words {
		dst = append(dst, '$')
		dst = strconv.AppendInt(dst, int64(len(w)), 10)
		dst = append(dst, '\r', '\n')
		dst = append(dst, w...)
		dst = append(dst, '\r', '\n')
	}
	return dst
}
