package acl

import "time"

// Context is where a denied command ran, as ACL LOG names it.
type Context uint8

// The contexts.
const (
	ContextTopLevel Context = iota
	ContextMulti
	ContextLua
	ContextModule
)

var contextNames = [...]string{"toplevel", "multi", "lua", "module"}

// String returns the context as ACL LOG prints it.
func (c Context) String() string { return contextNames[c] }

// DefaultLogMaxLen is acllog-max-len's default.
const DefaultLogMaxLen = 128

// groupWindow is how close in time two denials must be to share an entry.
const groupWindow = 60 * time.Second

// groupScan is how many of the newest entries a denial is compared with.
const groupScan = 10

// LogEntry is one ACL LOG entry. Object is the command's full name for
// ReasonCommand, the key or channel for ReasonKey and ReasonChannel, and
// the command as typed ("AUTH", "HELLO") for ReasonAuth, whose Username
// is the name that failed to authenticate.
type LogEntry struct {
	Count      int
	Reason     Reason
	Context    Context
	Object     string
	Username   string
	ClientInfo string    // CLIENT INFO's line of the client, as of the newest denial
	Time       time.Time // the newest denial's
}

// AgeSeconds is ACL LOG's age-seconds: the time since the newest denial,
// to the millisecond.
func (e *LogEntry) AgeSeconds(now time.Time) float64 {
	return float64(now.Sub(e.Time).Milliseconds()) / 1000
}

// Log is the ACL LOG: newest entry first, at most MaxLen entries; a
// denial like one of the 10 newest entries (same reason, context, object
// and user, within 60 seconds) counts on that entry, which moves to the
// front, as Redis groups them. Not safe for concurrent use.
type Log struct {
	// MaxLen is acllog-max-len; the log is trimmed to it on the next Add.
	MaxLen  int
	entries []LogEntry
}

// NewLog returns an empty log holding up to maxLen entries.
func NewLog(maxLen int) *Log { return &Log{MaxLen: maxLen} }

// Add records one denial; e.Count is ignored.
func (l *Log) Add(e LogEntry) {
	for i := 0; i < len(l.entries) && i < groupScan; i++ {
		m := &l.entries[i]
		d := m.Time.Sub(e.Time)
		if d < 0 {
			d = -d
		}
		if m.Reason != e.Reason || m.Context != e.Context || d > groupWindow ||
			m.Object != e.Object || m.Username != e.Username {
			continue
		}
		got := *m
		got.Count++
		got.ClientInfo = e.ClientInfo
		got.Time = e.Time
		copy(l.entries[1:i+1], l.entries[:i])
		l.entries[0] = got
		return
	}
	e.Count = 1
	l.entries = append(l.entries, LogEntry{})
	copy(l.entries[1:], l.entries)
	l.entries[0] = e
	if len(l.entries) > l.MaxLen {
		n := max(l.MaxLen, 0)
		clear(l.entries[n:])
		l.entries = l.entries[:n]
	}
}

// Entries returns up to n entries, newest first (n < 0: all; ACL LOG
// without a count shows 10).
func (l *Log) Entries(n int) []LogEntry {
	if n < 0 || n > len(l.entries) {
		n = len(l.entries)
	}
	return append([]LogEntry(nil), l.entries[:n]...)
}

// Len returns the number of entries.
func (l *Log) Len() int { return len(l.entries) }

// Reset empties the log (ACL LOG RESET).
func (l *Log) Reset() { l.entries = nil }
