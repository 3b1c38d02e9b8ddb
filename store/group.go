package store

import "fmt"

// Siblings: Redis's numbered databases are stores that share one memory
// cap. Each keeps its own keys, index and arena (so FLUSHDB empties one at
// once and SWAPDB is an exchange of two pointers), while MaxMemory bounds
// their sum and a write short of room evicts from its own store first,
// then from the others.

// group is the stores sharing one memory cap. All members run on the
// owning goroutine, like each store.
type group struct {
	members []*Store
}

// Sibling returns a new, empty store with s's options (and LFU
// parameters, lfu.go) that shares s's
// memory cap: MaxMemory (and SetMaxMemory, SetEviction) apply to the sum
// of the memory of s and all its siblings.
func (s *Store) Sibling() (*Store, error) {
	s.owner.check()
	o := s.o
	o.InitialCapacity = 0
	t, err := New(o)
	if err != nil {
		return nil, err
	}
	if s.group == nil {
		s.group = &group{members: []*Store{s}}
	}
	t.group = s.group
	t.lfuLogFactor, t.lfuDecayTime = s.lfuLogFactor, s.lfuDecayTime
	s.group.members = append(s.group.members, t)
	return t, nil
}

// totalUsed is the memory counted against MaxMemory: this store's, plus
// its siblings'.
func (s *Store) totalUsed() int64 {
	if s.group == nil {
		return s.used()
	}
	var n int64
	for _, m := range s.group.members {
		n += m.used()
	}
	return n
}

// SetMaxMemory changes the memory cap (0: none) of s and its siblings.
// A lower cap is reached by eviction in the following writes and Ticks.
func (s *Store) SetMaxMemory(n int64) error {
	if n < 0 {
		return fmt.Errorf("%w: MaxMemory %d is negative", ErrBadOption, n)
	}
	s.each(func(m *Store) { m.o.MaxMemory = n })
	return nil
}

// MaxMemory returns the cap s shares with its siblings (0: none), without
// Options' copy of every option.
func (s *Store) MaxMemory() int64 { return s.o.MaxMemory }

// SetEviction changes the eviction policy of s and its siblings.
func (s *Store) SetEviction(p EvictionPolicy) error {
	if p > lastPolicy {
		return fmt.Errorf("%w: unknown eviction policy %d", ErrBadOption, p)
	}
	s.each(func(m *Store) { m.o.Eviction, m.lfu = p, p.LFU() })
	return nil
}

// Options returns the store's options, with the current cap and policy.
func (s *Store) Options() Options { return s.o }

// SetLimits changes the collection conversion thresholds of s and its
// siblings; collections already converted stay as they are (as in Redis).
func (s *Store) SetLimits(l Limits) {
	s.owner.check()
	s.each(func(t *Store) { t.o.Limits = l })
}

func (s *Store) each(fn func(*Store)) {
	s.owner.check()
	if s.group == nil {
		fn(s)
		return
	}
	for _, m := range s.group.members {
		fn(m)
	}
}
