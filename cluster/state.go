package cluster

import (
	"errors"
	"fmt"
)

// ErrSetSlot is wrapped by the errors of State.SetSlot.
var ErrSetSlot = errors.New("cluster: bad SETSLOT")

// none marks a slot without an owner, or a slot not being moved.
const none = -1

// State is a node's view of the cluster at run time: the configuration it
// loaded, changed since by CLUSTER SETSLOT. The server's loop goroutine
// owns it; nothing in it is safe for concurrent use.
type State struct {
	cfg       *Config
	me        int
	epoch     uint64 // the loaded file's epoch, plus one once SETSLOT NODE has moved a slot
	owner     [Slots]int16
	moving    [Slots]int16 // MIGRATING to, or IMPORTING from, this node (none when stable)
	importing [Slots]bool  // moving[s] is the source (IMPORTING), not the target
	open      int          // slots MIGRATING or IMPORTING
	gen       uint64       // bumped by Replace: the engine refreshes what it derives from Nodes
	down      bool         // the cluster bus says cluster_state:fail
}

// New returns the state a node starts with from c (which must have been
// validated: Load does).
func New(c *Config) (*State, error) {
	s := &State{}
	if err := s.install(c); err != nil {
		return nil, err
	}
	for i := range s.moving {
		s.moving[i] = none
	}
	return s, nil
}

// NewEmpty returns a State with no nodes, for the cluster bus to fill
// (State.Replace).
func NewEmpty() *State {
	s := &State{cfg: &Config{}, me: -1}
	for i := range s.owner {
		s.owner[i] = none
		s.moving[i] = none
	}
	return s
}

func (s *State) install(c *Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	me := -1
	for i := range c.Nodes {
		if c.Nodes[i].ID == c.Myself {
			me = i
		}
	}
	s.cfg, s.me, s.epoch = c, me, c.Epoch
	for i := range s.owner {
		s.owner[i] = none
	}
	for i := range c.Nodes {
		for _, r := range c.Nodes[i].Slots {
			for x := int(r.First); x <= int(r.Last); x++ {
				s.owner[x] = int16(i)
			}
		}
	}
	return nil
}

// Reload replaces the state with c, a newer reading of the file. It
// refuses a configuration older than the state (its epoch lower than
// Epoch: a stale file, or slots moved by SETSLOT that the file does not
// yet record) and one naming another node as myself. Slots being moved
// stay so when both nodes are still members.
func (s *State) Reload(c *Config) error {
	switch {
	case c.Epoch < s.epoch && s.epoch > s.cfg.Epoch:
		return fmt.Errorf("%w: the file's epoch %d is older than this node's %d: slots were moved with CLUSTER SETSLOT since the file was read; write the map there (CLUSTER SAVECONFIG does) with a higher epoch", ErrConfig, c.Epoch, s.epoch)
	case c.Epoch < s.epoch:
		return fmt.Errorf("%w: the file's epoch %d is older than this node's %d: a stale file", ErrConfig, c.Epoch, s.epoch)
	}
	if c.Myself != s.cfg.Myself {
		return fmt.Errorf("%w: the file says this node is %s, it is %s", ErrConfig, c.Myself, s.cfg.Myself)
	}
	old := s.cfg
	if err := s.install(c); err != nil {
		return err
	}
	for x := range s.moving {
		if s.moving[x] == none {
			continue
		}
		if i := s.Index(old.Nodes[s.moving[x]].ID); i >= 0 {
			s.moving[x] = int16(i)
		} else {
			s.moving[x], s.importing[x] = none, false
			s.open--
		}
	}
	return nil
}

// Replace installs c, the cluster bus's current view (package
// cluster/member builds it on every change of membership or slots),
// without Reload's epoch rules: the bus has its own. Slots being moved
// stay so while both nodes are members. c must be valid.
//
// Its cost follows the change, not the 16,384 slots: when c lists the
// same nodes in the same order as the view it replaces (every change but
// a node joining or leaving), it walks each node's old and new ranges side
// by side and rewrites only the slots the node gained or lost; a node
// whose Slots is the very slice of the old view (package cluster/member
// hands unchanged ranges on) is skipped at once. A change of membership
// rebuilds the table.
func (s *State) Replace(c *Config) {
	old := s.cfg
	if sameMembers(old, c) {
		s.cfg, s.epoch = c, c.Epoch
		for i := range c.Nodes {
			was, now := old.Nodes[i].Slots, c.Nodes[i].Slots
			if sameRanges(was, now) {
				continue
			}
			// In index order, a slot moving from node i to node j is
			// freed by i and taken by j whichever comes first: a node
			// frees only the slots still its own.
			diffRanges(was, now, func(first, last int, gained bool) {
				for x := first; x <= last; x++ {
					if gained {
						s.owner[x] = int16(i)
					} else if s.owner[x] == int16(i) {
						s.owner[x] = none
					}
				}
			})
		}
		s.gen++
		return
	}
	s.rebuild(c)
}

// rebuild is Replace for a change of membership: the whole owner table
// rebuilt from c, every moving slot mapped again by its node's id.
func (s *State) rebuild(c *Config) {
	old := s.cfg
	s.cfg, s.me, s.epoch = c, -1, c.Epoch
	for i := range c.Nodes {
		if c.Nodes[i].ID == c.Myself {
			s.me = i
		}
	}
	for i := range s.owner {
		s.owner[i] = none
	}
	for i := range c.Nodes {
		for _, r := range c.Nodes[i].Slots {
			for x := int(r.First); x <= int(r.Last); x++ {
				s.owner[x] = int16(i)
			}
		}
	}
	for x := range s.moving {
		if s.moving[x] == none {
			continue
		}
		if i := s.Index(old.Nodes[s.moving[x]].ID); i >= 0 {
			s.moving[x] = int16(i)
		} else {
			s.moving[x], s.importing[x] = none, false
			s.open--
		}
	}
	s.gen++
}

// sameMembers reports whether b lists the nodes of a, by id, in the same
// order, with the same myself: every node keeps its index.
func sameMembers(a, b *Config) bool {
	if a == nil || len(a.Nodes) != len(b.Nodes) || a.Myself != b.Myself {
		return false
	}
	for i := range a.Nodes {
		if a.Nodes[i].ID != b.Nodes[i].ID {
			return false
		}
	}
	return true
}

// sameRanges reports whether a and b hold the same ranges: at once when
// they are one slice.
func sameRanges(a, b []Range) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// diffRanges calls f for each run of slots in b and not in a (gained) or
// in a and not in b, in slot order, walking both (sorted, disjoint) range
// lists once: its cost is their lengths plus f's.
func diffRanges(a, b []Range, f func(first, last int, gained bool)) {
	i, j := 0, 0
	for x := 0; x < Slots; {
		for i < len(a) && int(a[i].Last) < x {
			i++
		}
		for j < len(b) && int(b[j].Last) < x {
			j++
		}
		if i == len(a) && j == len(b) {
			return
		}
		inA := i < len(a) && int(a[i].First) <= x
		inB := j < len(b) && int(b[j].First) <= x
		end := Slots // where inA or inB changes next (exclusive)
		if i < len(a) {
			if inA {
				end = min(end, int(a[i].Last)+1)
			} else {
				end = min(end, int(a[i].First))
			}
		}
		if j < len(b) {
			if inB {
				end = min(end, int(b[j].Last)+1)
			} else {
				end = min(end, int(b[j].First))
			}
		}
		if inA != inB {
			f(x, end-1, inB)
		}
		x = end
	}
}

// Gen changes whenever Replace installed a new view.
func (s *State) Gen() uint64 { return s.gen }

// SetDown records the cluster bus's verdict on the cluster's state: while
// down, keyed commands answer -CLUSTERDOWN.
func (s *State) SetDown(down bool) { s.down = down }

// Down reports whether the cluster bus says the cluster is down.
func (s *State) Down() bool { return s.down }

// MovingID returns the id of the node slot is migrating to or importing
// from, and whether it is importing; "" when the slot is stable.
func (s *State) MovingID(slot int) (id string, importing bool) {
	m := s.moving[slot]
	if m == none {
		return "", false
	}
	return s.cfg.Nodes[m].ID, s.importing[slot]
}

// Config returns the configuration as the state now stands (slot owners
// after SETSLOT, the state's epoch), for CLUSTER SAVECONFIG.
func (s *State) Config() *Config {
	c := &Config{Epoch: s.epoch, Myself: s.cfg.Myself, Nodes: make([]Node, len(s.cfg.Nodes))}
	for i, n := range s.cfg.Nodes {
		n.Slots = s.Ranges(i)
		c.Nodes[i] = n
	}
	return c
}

// Epoch returns the configuration epoch.
func (s *State) Epoch() uint64 { return s.epoch }

// Nodes returns every member; the slice is the state's, do not modify it.
// A node's Slots are the file's: Ranges gives the current ones.
func (s *State) Nodes() []Node { return s.cfg.Nodes }

// Me returns this node's index in Nodes.
func (s *State) Me() int { return s.me }

// Owner returns the index in Nodes of slot's owner, or -1 when no node
// owns it.
func (s *State) Owner(slot uint16) int { return int(s.owner[slot]) }

// Migrating returns the node slot is being moved to, when this node has it
// MIGRATING.
func (s *State) Migrating(slot uint16) (int, bool) {
	m := s.moving[slot]
	return int(m), m != none && !s.importing[slot]
}

// Importing returns the node slot is being moved from, when this node has
// it IMPORTING.
func (s *State) Importing(slot uint16) (int, bool) {
	m := s.moving[slot]
	return int(m), m != none && s.importing[slot]
}

// Open returns how many slots are MIGRATING or IMPORTING.
func (s *State) Open() int { return s.open }

// Ranges returns the slots node i owns now, as ranges in slot order.
func (s *State) Ranges(i int) []Range {
	var rs []Range
	for x := 0; x < Slots; x++ {
		if int(s.owner[x]) != i {
			continue
		}
		if n := len(rs); n > 0 && int(rs[n-1].Last) == x-1 {
			rs[n-1].Last = uint16(x)
		} else {
			rs = append(rs, Range{uint16(x), uint16(x)})
		}
	}
	return rs
}

// Covered returns how many slots have an owner.
func (s *State) Covered() int {
	n := 0
	for _, o := range s.owner {
		if o != none {
			n++
		}
	}
	return n
}

// Index returns the index in Nodes of the node with id, or -1.
func (s *State) Index(id string) int {
	for i := range s.cfg.Nodes {
		if s.cfg.Nodes[i].ID == id {
			return i
		}
	}
	return -1
}

// SetSlot is CLUSTER SETSLOT: how is "MIGRATING" (to node id), "IMPORTING"
// (from node id), "STABLE" (id ignored) or "NODE" (slot now owned by id),
// with Redis's rules: only a slot's owner may migrate it, its owner may
// not import it, and NODE ends any move of the slot. Giving a slot away
// with NODE raises the epoch one above the file's, so that a reload of the
// unedited file is refused rather than undoing the move.
func (s *State) SetSlot(slot uint16, how, id string) error {
	if how == "STABLE" {
		s.setMoving(slot, none, false)
		return nil
	}
	n := s.Index(id)
	if n < 0 {
		return fmt.Errorf("%w: I don't know about node %s", ErrSetSlot, id)
	}
	switch how {
	case "MIGRATING":
		if int(s.owner[slot]) != s.me {
			return fmt.Errorf("%w: I'm not the owner of hash slot %d", ErrSetSlot, slot)
		}
		if n == s.me {
			return fmt.Errorf("%w: Can't MIGRATE to myself", ErrSetSlot)
		}
		s.setMoving(slot, n, false)
	case "IMPORTING":
		if int(s.owner[slot]) == s.me {
			return fmt.Errorf("%w: I'm already the owner of hash slot %d", ErrSetSlot, slot)
		}
		if n == s.me {
			return fmt.Errorf("%w: Can't IMPORT from myself", ErrSetSlot)
		}
		s.setMoving(slot, n, true)
	case "NODE":
		if int(s.owner[slot]) != n {
			s.owner[slot] = int16(n)
			if s.epoch == s.cfg.Epoch {
				s.epoch++
			}
		}
		s.setMoving(slot, none, false)
	default:
		return fmt.Errorf("%w: Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP", ErrSetSlot)
	}
	return nil
}

func (s *State) setMoving(slot uint16, n int, importing bool) {
	was := s.moving[slot] != none
	s.moving[slot], s.importing[slot] = int16(n), importing && n != none
	switch is := n != none; {
	case is && !was:
		s.open++
	case !is && was:
		s.open--
	}
}
