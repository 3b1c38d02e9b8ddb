package ring

import (
	"os"

	"github.com/goblin-kv/goblin/internal/shm"
)

// BreakMapping swaps the mapping of s's client i for a copy in a file at
// path that is then truncated, so the server's next access to it faults
// (TestFaultDropsOnlyThatClient's way, what a version 1 client could do).
// Loop goroutine only.
func BreakMapping(s *Server, i int, path string) error {
	c := s.clients[i]
	m, err := shm.Create(path, len(c.mem))
	if err != nil {
		return err
	}
	copy(m, c.mem)
	shm.Unmap(c.mem)
	c.mem, c.req.mem, c.rep.mem = m, m, m
	return os.Truncate(path, 0)
}
