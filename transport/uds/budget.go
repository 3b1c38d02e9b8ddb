package uds

// Budget bounds the memory every client of a group of socket listeners may
// hold in buffers, in total: the requests each has sent but the server has
// not executed yet (a partial request, or requests held back while replies
// drain), the replies it has not read, and what its session keeps for a
// partial request (the argument offsets of a long RESP command). It is
// Redis's maxmemory-clients: when the total passes the limit, the client
// holding the most is disconnected, then the next, until the total is back
// under it, so a few clients hoarding memory are dropped rather than the
// server or everyone else.
//
// A client that sends complete requests and reads its replies holds no
// buffer of its own between reads (it is served from the listener's shared
// buffers), so the budget is spent only by clients that leave work behind.
//
// One Budget may be shared by several listeners (Config.Budget); all of
// them must be polled by the same goroutine, which owns the Budget.
type Budget struct {
	// Limit is the most bytes the clients may hold; 0 means no limit
	// (the budget only counts).
	Limit int64

	used     int64
	peak     int64
	released int64
	evicted  int64
	members  []*Server
}

// BudgetStats are a Budget's counters.
type BudgetStats struct {
	Used     int64 // bytes clients hold now
	Peak     int64 // the most they held at once (after any evictions)
	Released int64 // bytes of client buffers freed since the start (disconnects, shrinks, idle clients)
	Evicted  int64 // clients disconnected because the total passed Limit
}

// Stats copies the budget's counters into st.
func (b *Budget) Stats(st *BudgetStats) {
	*st = BudgetStats{Used: b.used, Peak: b.peak, Released: b.released, Evicted: b.evicted}
}

func (b *Budget) join(s *Server) { b.members = append(b.members, s) }

func (b *Budget) leave(s *Server) {
	for i, m := range b.members {
		if m == s {
			b.members = append(b.members[:i], b.members[i+1:]...)
			return
		}
	}
}

// charge moves c's charge to mem bytes and, when the total is over the
// limit, disconnects the biggest clients until it is not. It reports
// whether c itself survived. A listener charges a buffer before it
// allocates it, so a client that would pass the limit is dropped before
// the memory is taken.
func (b *Budget) charge(c *conn, mem int) bool {
	delta := int64(mem - c.mem)
	c.mem = mem
	b.used += delta
	if delta < 0 {
		b.released -= delta
	}
	for b.Limit > 0 && b.used > b.Limit {
		s, big := b.biggest()
		if big == nil {
			break
		}
		b.evicted++
		s.evict(big, b)
	}
	b.peak = max(b.peak, b.used)
	return c.fd >= 0
}

// biggest returns the client holding the most memory and its listener.
func (b *Budget) biggest() (*Server, *conn) {
	var bs *Server
	var big *conn
	for _, s := range b.members {
		for _, c := range s.conns {
			if c != nil && c.mem > 0 && (big == nil || c.mem > big.mem) {
				bs, big = s, c
			}
		}
	}
	return bs, big
}
