package client

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/goblin-kv/goblin/cluster"
)

// ErrClusterCommand is wrapped when Cluster.Do is given a command that
// means something on one node only (SCAN, RANDOMKEY, SELECT, ...): rather
// than answer for a third of the data, it is refused, and nothing is sent.
var ErrClusterCommand = errors.New("client: command not supported across a cluster")

// BatchError is returned beside the results of a cluster call that reached
// several nodes (ClusterPipeline.Exec, Cluster.MGet, a split or fanned-out
// Cluster.Do) when some of them failed: the results of the others are
// valid. Errs[i] is the error of command (or key, or node) i, nil for those
// that were answered.
type BatchError struct {
	Errs []error
	What string // what Errs indexes: "commands", "keys" or "nodes"
}

func (e *BatchError) Error() string {
	n, first := 0, -1
	for i, err := range e.Errs {
		if err != nil {
			n++
			if first < 0 {
				first = i
			}
		}
	}
	return fmt.Sprintf("client: %d of %d %s failed; the first (%d): %v", n, len(e.Errs), e.What, first, e.Errs[first])
}

// Unwrap returns the distinct errors, so that errors.Is and errors.As see
// each cause.
func (e *BatchError) Unwrap() []error {
	var out []error
	seen := map[error]bool{}
	for _, err := range e.Errs {
		if err != nil && !seen[err] {
			seen[err] = true
			out = append(out, err)
		}
	}
	return out
}

// NodeTargets returns, for each primary (each node that owns slots), the
// target its commands go to: to send a one-node command to every node.
func (c *Cluster) NodeTargets() []string {
	var out []string
	for _, n := range c.primaries() {
		n.mu.Lock()
		out = append(out, n.targets[0])
		n.mu.Unlock()
	}
	return out
}

// primaries returns the nodes that own at least one slot.
func (c *Cluster) primaries() []*clusterNode {
	c.mu.RLock()
	defer c.mu.RUnlock()
	owns := make([]bool, len(c.nodes))
	for _, i := range c.owner {
		if i >= 0 {
			owns[i] = true
		}
	}
	var out []*clusterNode
	for i, n := range c.nodes {
		if owns[i] {
			out = append(out, n)
		}
	}
	return out
}

// everyPrimary runs args on every primary in parallel and combines the
// replies for name: DBSIZE sums, KEYS joins, the others answer OK when
// every node does (else the first error reply).
func (c *Cluster) everyPrimary(ctx context.Context, name string, args []any) (Value, error) {
	nodes := c.primaries()
	if len(nodes) == 0 {
		if err := c.Refresh(ctx); err != nil {
			return Value{}, err
		}
		if nodes = c.primaries(); len(nodes) == 0 {
			return Value{}, errors.New("client: the cluster's slot map names no node")
		}
	}
	vals := make([]Value, len(nodes))
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := c.doOn(ctx, n, false, args)
			var se *ServerError
			if err != nil && !errors.As(err, &se) {
				errs[i] = fmt.Errorf("client: cluster node %s: %w", n.endpoint, err)
			}
			vals[i] = v
		}()
	}
	wg.Wait()
	var out Value
	switch name {
	case "DBSIZE":
		out.Kind = KindInt
	case "KEYS":
		out.Kind, out.Array = KindArray, []Value{}
	default:
		out.Kind, out.Str = KindStatus, []byte("OK")
	}
	for i, v := range vals {
		if errs[i] != nil {
			continue
		}
		if v.Kind == KindError {
			return v, v.Err
		}
		switch name {
		case "DBSIZE":
			out.Int += v.Int
		case "KEYS":
			out.Array = append(out.Array, v.Array...)
		}
	}
	for _, err := range errs {
		if err != nil {
			return out, &BatchError{Errs: errs, What: "nodes"}
		}
	}
	return out, nil
}

// spansSlots reports whether the keys at pos are in more than one slot.
func spansSlots(args []any, pos []int) bool {
	for i := 1; i < len(pos); i++ {
		if cluster.Slot([]byte(argText(args[pos[i]]))) != cluster.Slot([]byte(argText(args[pos[0]]))) {
			return true
		}
	}
	return false
}

// split runs a multi-key command whose keys span slots as one command per
// slot (in a cluster pipeline) and combines the replies: MGET's values in
// key order, the counts of DEL, UNLINK, EXISTS and TOUCH summed, MSET's OK.
func (c *Cluster) split(ctx context.Context, name string, args []any, pos []int) (Value, error) {
	step := 1
	if name == "MSET" {
		step = 2 // key value pairs
	}
	bySlot := map[uint16][]int{} // slot -> indexes in pos
	var order []uint16
	for j, p := range pos {
		s := cluster.Slot([]byte(argText(args[p])))
		if _, ok := bySlot[s]; !ok {
			order = append(order, s)
		}
		bySlot[s] = append(bySlot[s], j)
	}
	cp := c.Pipeline()
	for _, s := range order {
		cmd := []any{args[0]}
		for _, j := range bySlot[s] {
			cmd = append(cmd, args[pos[j]:pos[j]+step]...)
		}
		cp.Do(cmd...)
	}
	vs, err := cp.Exec(ctx)
	var be *BatchError
	if err != nil && !errors.As(err, &be) {
		return Value{}, err
	}
	var out Value
	switch name {
	case "MGET":
		out.Kind, out.Array = KindArray, make([]Value, len(pos))
	case "MSET":
		out.Kind, out.Str = KindStatus, []byte("OK")
	default:
		out.Kind = KindInt
	}
	for k, s := range order {
		if be != nil && be.Errs[k] != nil {
			continue
		}
		v := vs[k]
		if v.Kind == KindError {
			return v, v.Err
		}
		switch name {
		case "MGET":
			if v.Kind != KindArray || len(v.Array) != len(bySlot[s]) {
				return Value{}, fmt.Errorf("%w: MGET answered %s", ErrUnexpectedReply, v)
			}
			for x, j := range bySlot[s] {
				out.Array[j] = v.Array[x]
			}
		case "MSET":
		default:
			out.Int += v.Int
		}
	}
	if be != nil {
		return out, be
	}
	return out, nil
}
