package uds

// This file is the TLS listeners' session cache: Redis's
// tls-session-caching, tls-session-cache-size and tls-session-cache-timeout
// on Go's crypto/tls.
//
// Redis (OpenSSL) keeps resumable sessions in a server-side cache of
// tls-session-cache-size entries that live tls-session-cache-timeout
// seconds, and hands out tickets whose lifetime hint is that timeout.
// crypto/tls resumes with stateless tickets: the whole session encrypted
// under the Config's ticket keys and kept by the client, with no bound on
// how many and a fixed seven-day lifetime. Config.WrapSession and
// UnwrapSession let the server keep the state itself instead, and that is
// what this cache does: the ticket a client gets is a random 16-byte
// identifier, the session's state stays here (its serialized form, with
// the client's certificate chain when it sent one), at most Size sessions
// are kept (the oldest is dropped for a new one, as OpenSSL's cache
// flushes), and one older than Timeout is not resumed: the client makes
// a full handshake, as with an unknown ticket. A cache belongs to one
// built configuration, so a CONFIG SET that rebuilds it (a rotated
// certificate, a new CA) also forgets every session made under the old
// one, as Redis's new SSL_CTX does.
//
// What is not the same: crypto/tls tells clients a seven-day ticket
// lifetime (Redis tells them the timeout), so a client may offer a ticket
// the server has dropped; it then makes a full handshake, which costs it
// one round trip more than asking for none.

import (
	"crypto/rand"
	"crypto/tls"
	"sync"
	"time"
)

// Redis's defaults for the session cache.
const (
	DefaultSessionCacheSize    = 20480
	DefaultSessionCacheTimeout = 300 // seconds
)

// sessionID names one cached session; it is the ticket the client holds.
type sessionID [16]byte

// sessionCache holds the resumable sessions of one TLS configuration. Its
// methods run on the handshakes' goroutines, so a mutex guards it.
type sessionCache struct {
	size    int           // at most this many sessions; 0: no bound (Redis's 0)
	timeout time.Duration // a session older than this is not resumed
	now     func() time.Time

	mu      sync.Mutex
	entries map[sessionID]cachedSession
	// queue holds the ids in the order they were made, so the oldest,
	// which expires first, is at queue[head]: a new session drops the
	// expired ones and, at size, the oldest.
	queue []sessionID
	head  int
}

type cachedSession struct {
	state   []byte // tls.SessionState.Bytes()
	created time.Time
}

func newSessionCache(size int, timeout time.Duration) *sessionCache {
	return &sessionCache{size: size, timeout: timeout, now: time.Now, entries: map[sessionID]cachedSession{}}
}

// install makes cfg resume sessions through the cache.
func (c *sessionCache) install(cfg *tls.Config) {
	cfg.WrapSession = c.wrap
	cfg.UnwrapSession = c.unwrap
}

// wrap keeps a new session and returns the ticket naming it.
func (c *sessionCache) wrap(_ tls.ConnectionState, ss *tls.SessionState) ([]byte, error) {
	state, err := ss.Bytes()
	if err != nil {
		return nil, err
	}
	var id sessionID
	rand.Read(id[:]) // never fails (crypto/rand)
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	for c.head < len(c.queue) {
		old := c.queue[c.head]
		if e := c.entries[old]; (c.size == 0 || len(c.queue)-c.head < c.size) && now.Sub(e.created) < c.timeout {
			break
		}
		delete(c.entries, old)
		c.head++
	}
	if c.head > len(c.queue)/2 { // reclaim the dropped half
		c.queue = c.queue[:copy(c.queue, c.queue[c.head:])]
		c.head = 0
	}
	c.queue = append(c.queue, id)
	c.entries[id] = cachedSession{state: state, created: now}
	return id[:], nil
}

// unwrap returns the session a ticket names; nil (a full handshake) for a
// ticket it does not know or one that has expired.
func (c *sessionCache) unwrap(ticket []byte, _ tls.ConnectionState) (*tls.SessionState, error) {
	var id sessionID
	if len(ticket) != len(id) {
		return nil, nil
	}
	copy(id[:], ticket)
	c.mu.Lock()
	e, ok := c.entries[id]
	ok = ok && c.now().Sub(e.created) < c.timeout
	c.mu.Unlock()
	if !ok {
		return nil, nil
	}
	ss, err := tls.ParseSessionState(e.state)
	if err != nil {
		return nil, nil // not resumable: a full handshake
	}
	return ss, nil
}

// len returns the number of sessions held.
func (c *sessionCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
