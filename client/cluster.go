package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goblin-kv/goblin/cluster"
	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/transport"
)

// ErrClusterRedirects is returned when a command is still redirected after
// ClusterOptions.MaxRedirects attempts.
var ErrClusterRedirects = errors.New("client: too many cluster redirects")

// ClusterOptions configure a Cluster. The zero value of every field but
// Seeds works.
type ClusterOptions struct {
	// Seeds are addresses of some of the cluster's nodes: RESP targets
	// ("tcp://host:port") or bare "host:port". The slot map is learnt from
	// the first that answers.
	Seeds []string
	// Prefer orders the transports a node is reached by, among the targets
	// it advertises (CLUSTER TARGETS): the first scheme that dials wins, so
	// []transport.Scheme{transport.Ring, transport.Aeron, transport.TCP} uses the ring
	// for a node on this host and Aeron or TCP for the others. Empty: the
	// node's targets in the order its configuration lists them. The node's
	// RESP tcp address is the last resort either way.
	Prefer []transport.Scheme
	// Options apply to every connection.
	Options Options
	// MaxRedirects bounds the MOVED, ASK and TRYAGAIN replies one command
	// follows (default 16).
	MaxRedirects int
}

// Cluster is a client of a goblin cluster (docs/cluster.md) or of any Redis
// Cluster: it learns which node owns which of the 16,384 slots, sends each
// command to the owner of its keys' slot over a transport that node
// advertises, follows -MOVED (and refreshes the map), -ASK and -TRYAGAIN,
// and splits MGET and pipelines per node, running the nodes' batches in
// parallel. It is safe for concurrent use.
type Cluster struct {
	o ClusterOptions

	moved, asked atomic.Uint64 // redirects followed (Redirects)

	mu    sync.RWMutex
	owner [cluster.Slots]int32 // index in nodes; -1 unknown
	nodes []*clusterNode
	byEnd map[string]*clusterNode // "host:port" -> node
}

// clusterNode is one node and its connections, made when first needed.
type clusterNode struct {
	id       string
	endpoint string   // host:port of its RESP tcp address
	targets  []string // what it serves (CLUSTER TARGETS), best first

	mu   sync.Mutex
	data *Client // commands, over the preferred transport
	ctl  *Client // RESP over tcp: the slot map, ASKING
}

// DialCluster connects to the cluster that seeds belong to, with default
// options.
func DialCluster(ctx context.Context, seeds ...string) (*Cluster, error) {
	return ClusterOptions{Seeds: seeds}.Dial(ctx)
}

// Dial connects to the cluster: it learns the slot map from the first seed
// that answers. Node connections are made when first used.
func (o ClusterOptions) Dial(ctx context.Context) (*Cluster, error) {
	if len(o.Seeds) == 0 {
		return nil, errors.New("client: DialCluster needs at least one seed address")
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = 16
	}
	c := &Cluster{o: o, byEnd: map[string]*clusterNode{}}
	for i := range c.owner {
		c.owner[i] = -1
	}
	if err := c.Refresh(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// seedEndpoint returns a seed's host:port when it is a TCP seed (a tcp://
// target or a bare host:port), or "" for a seed of another transport (a
// Unix socket, a ring, Aeron), which is dialled as the target it is.
func seedEndpoint(s string) (string, error) {
	t, err := transport.ParseTarget(s)
	if err != nil {
		return "", fmt.Errorf("client: cluster seed: %w", err)
	}
	if t.Scheme == transport.TCP {
		return t.Address, nil
	}
	return "", nil
}

// Refresh reads the slot map again (CLUSTER SLOTS, and CLUSTER TARGETS for
// the transports each node serves) from a known node or a seed.
func (c *Cluster) Refresh(ctx context.Context) error {
	var tried []string
	c.mu.RLock()
	for _, n := range c.nodes {
		tried = append(tried, n.endpoint)
	}
	c.mu.RUnlock()
	var errs []error
	var others []string // seeds that are not TCP endpoints
	for _, s := range c.o.Seeds {
		ep, err := seedEndpoint(s)
		switch {
		case err != nil:
			errs = append(errs, err)
		case ep == "":
			others = append(others, s)
		default:
			tried = append(tried, ep)
		}
	}
	ask := func(ctl *Client) error {
		slots, err := ctl.Do(ctx, "CLUSTER", "SLOTS")
		if err != nil {
			return err
		}
		targets, _ := ctl.Do(ctx, "CLUSTER", "TARGETS") // a Redis node has none
		return c.install(slots, targets)
	}
	for _, ep := range tried {
		n := c.node(ep)
		ctl, err := n.control(ctx, c.o.Options)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := ask(ctl); err != nil {
			errs = append(errs, err)
			continue
		}
		return nil
	}
	for _, s := range others {
		// A seed on another transport: ask it over that transport, once.
		o := c.o.Options
		sc, err := o.Dial(ctx, s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		err = ask(sc)
		sc.Close()
		if err == nil {
			return nil
		}
		errs = append(errs, fmt.Errorf("client: cluster seed %s: %w", s, err))
	}
	return fmt.Errorf("client: no cluster node answered CLUSTER SLOTS: %w", errors.Join(errs...))
}

// node returns the node at endpoint, adding it (without slots) if new.
func (c *Cluster) node(endpoint string) *clusterNode {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.byEnd[endpoint]; n != nil {
		return n
	}
	n := &clusterNode{endpoint: endpoint, targets: []string{"tcp://" + endpoint}}
	c.byEnd[endpoint] = n
	c.nodes = append(c.nodes, n)
	return n
}

// install replaces the slot map with a CLUSTER SLOTS reply and the nodes'
// targets with a CLUSTER TARGETS one.
func (c *Cluster) install(slots, targets Value) error {
	byID := map[string][]string{}
	for _, e := range targets.Array {
		if len(e.Array) == 2 {
			var ts []string
			for _, t := range e.Array[1].Array {
				ts = append(ts, string(t.Str))
			}
			byID[string(e.Array[0].Str)] = ts
		}
	}
	var owner [cluster.Slots]int32
	for i := range owner {
		owner[i] = -1
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	index := map[*clusterNode]int32{}
	for i, n := range c.nodes {
		index[n] = int32(i)
	}
	for _, r := range slots.Array {
		if len(r.Array) < 3 || len(r.Array[2].Array) < 2 {
			return fmt.Errorf("client: malformed CLUSTER SLOTS entry %s", r)
		}
		first, last, m := r.Array[0].Int, r.Array[1].Int, r.Array[2].Array
		if first < 0 || last >= cluster.Slots || first > last {
			return fmt.Errorf("client: CLUSTER SLOTS range %d-%d", first, last)
		}
		ep := net.JoinHostPort(string(m[0].Str), strconv.FormatInt(m[1].Int, 10))
		n := c.byEnd[ep]
		if n == nil {
			n = &clusterNode{endpoint: ep, targets: []string{"tcp://" + ep}}
			c.byEnd[ep] = n
			index[n] = int32(len(c.nodes))
			c.nodes = append(c.nodes, n)
		}
		if len(m) > 2 {
			n.mu.Lock()
			n.id = string(m[2].Str)
			if ts := byID[n.id]; len(ts) > 0 && !equalStrings(ts, n.targets) {
				n.targets = c.order(ts, ep)
			}
			n.mu.Unlock()
		}
		for s := first; s <= last; s++ {
			owner[s] = index[n]
		}
	}
	c.owner = owner
	return nil
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// order sorts a node's targets by ClusterOptions.Prefer and appends its
// RESP tcp endpoint as the last resort.
func (c *Cluster) order(ts []string, endpoint string) []string {
	var out []string
	if len(c.o.Prefer) == 0 {
		out = append(out, ts...)
	} else {
		for _, sch := range c.o.Prefer {
			for _, s := range ts {
				if t, err := transport.ParseTarget(s); err == nil && t.Scheme == sch {
					out = append(out, s)
				}
			}
		}
	}
	return append(out, "tcp://"+endpoint)
}

// control returns the node's RESP connection.
func (n *clusterNode) control(ctx context.Context, o Options) (*Client, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ctl == nil {
		cl, err := o.Dial(ctx, "tcp://"+n.endpoint+"?proto=resp")
		if err != nil {
			return nil, err
		}
		n.ctl = cl
	}
	return n.ctl, nil
}

// conn returns the node's data connection, dialling its targets in order
// the first time.
func (n *clusterNode) conn(ctx context.Context, o Options) (*Client, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.data != nil {
		return n.data, nil
	}
	var errs []error
	for _, t := range n.targets {
		cl, err := o.Dial(ctx, t)
		if err == nil {
			n.data = cl
			return cl, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("client: cluster node %s: no target answered: %w", n.endpoint, errors.Join(errs...))
}

// Target returns the target the client reaches the node that owns slot
// by, once connected ("" before).
func (c *Cluster) Target(slot uint16) string {
	c.mu.RLock()
	i := c.owner[slot]
	c.mu.RUnlock()
	if i < 0 {
		return ""
	}
	n := c.nodes[i]
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.data == nil {
		return ""
	}
	return n.data.Target().String()
}

// Close closes every connection.
func (c *Cluster) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.nodes {
		n.mu.Lock()
		if n.data != nil {
			n.data.Close()
		}
		if n.ctl != nil {
			n.ctl.Close()
		}
		n.data, n.ctl = nil, nil
		n.mu.Unlock()
	}
	return nil
}

// slotOf returns the slot of a command's keys from the command table's key
// positions, or -1 for a command without keys (any node answers it).
func slotOf(args []any) int {
	pos := keyPositions(args)
	if len(pos) == 0 {
		return -1
	}
	return int(cluster.Slot([]byte(argText(args[pos[0]]))))
}

// keyPositions returns the indexes of a command's keys in args, from the
// command table (none for a command it does not know).
func keyPositions(args []any) []int {
	if len(args) == 0 {
		return nil
	}
	op := command.ByName([]byte(argText(args[0])))
	if op != command.OpNone && len(args) > 1 && len(command.Subcommands(op)) > 0 {
		op = command.Subcommand(op, []byte(argText(args[1])))
	}
	spec := command.Lookup(op)
	if spec == nil {
		return nil
	}
	pos, ok := spec.KeyPositions(nil, len(args), func(i int) []byte { return []byte(argText(args[i])) })
	if !ok {
		return nil
	}
	return pos
}

func argText(a any) string {
	switch v := a.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return fmt.Sprint(a)
}

// ownerOf returns the node owning slot (any node for -1), refreshing the
// map once if the slot has no known owner.
func (c *Cluster) ownerOf(ctx context.Context, slot int) (*clusterNode, error) {
	for attempt := 0; ; attempt++ {
		c.mu.RLock()
		var n *clusterNode
		switch {
		case slot < 0 && len(c.nodes) > 0:
			n = c.nodes[0]
		case slot >= 0 && c.owner[slot] >= 0:
			n = c.nodes[c.owner[slot]]
		}
		c.mu.RUnlock()
		if n != nil {
			return n, nil
		}
		if attempt > 0 {
			return nil, fmt.Errorf("client: no cluster node owns slot %d", slot)
		}
		if err := c.Refresh(ctx); err != nil {
			return nil, err
		}
	}
}

// Redirects returns how many -MOVED and -ASK replies the client has
// followed.
func (c *Cluster) Redirects() (moved, ask uint64) { return c.moved.Load(), c.asked.Load() }

func (c *Cluster) count(rd redirect) {
	if rd.ask {
		c.asked.Add(1)
	} else {
		c.moved.Add(1)
	}
}

// redirect is a parsed -MOVED or -ASK.
type redirect struct {
	ask      bool
	slot     int
	endpoint string
}

// parseRedirect reads "MOVED slot host:port" and "ASK slot host:port".
func parseRedirect(e *ServerError) (redirect, bool) {
	if e == nil || (e.Code != "MOVED" && e.Code != "ASK") {
		return redirect{}, false
	}
	f := strings.Fields(e.Message)
	if len(f) != 3 {
		return redirect{}, false
	}
	slot, err := strconv.Atoi(f[1])
	if err != nil || slot < 0 || slot >= cluster.Slots {
		return redirect{}, false
	}
	return redirect{ask: e.Code == "ASK", slot: slot, endpoint: f[2]}, true
}

// Do sends a command to the node owning its keys' slot (found with the
// command table's key positions) and follows redirects. Arguments and
// reply as for Client.Do. Beyond one node:
//   - MGET, DEL, UNLINK, EXISTS, TOUCH and MSET whose keys span slots are
//     split per slot, as MGet does, and their replies combined (the array
//     in key order, the counts summed, OK when every part is);
//   - FLUSHALL, FLUSHDB, DBSIZE, KEYS, CONFIG SET, CONFIG RESETSTAT,
//     SCRIPT FLUSH and FUNCTION FLUSH go to every primary and their replies
//     are combined (OK when every node's is, sizes summed, keys joined);
//   - SCAN, RANDOMKEY, SELECT, SWAPDB and MOVE are refused
//     (ErrClusterCommand): each would answer for one node only;
//   - any other keyless command (PING, INFO, CLUSTER ...) goes to one node.
//
// A split or fanned-out command that fails on some nodes returns a
// *BatchError.
func (c *Cluster) Do(ctx context.Context, args ...any) (Value, error) {
	if len(args) == 0 {
		return Value{}, errors.New("client: Do needs a command name")
	}
	name := strings.ToUpper(argText(args[0]))
	if len(args) > 1 && (name == "CONFIG" || name == "SCRIPT" || name == "FUNCTION") {
		name += " " + strings.ToUpper(argText(args[1]))
	}
	switch name {
	case "FLUSHALL", "FLUSHDB", "DBSIZE", "KEYS", "CONFIG SET", "CONFIG RESETSTAT", "SCRIPT FLUSH", "FUNCTION FLUSH":
		return c.everyPrimary(ctx, name, args)
	case "SCAN", "RANDOMKEY", "SELECT", "SWAPDB", "MOVE":
		return Value{}, fmt.Errorf("%w: %s answers for one node of the cluster; send it to each node (Cluster.NodeTargets names them)", ErrClusterCommand, name)
	case "MGET", "DEL", "UNLINK", "EXISTS", "TOUCH", "MSET":
		if pos := keyPositions(args); spansSlots(args, pos) {
			return c.split(ctx, name, args, pos)
		}
	}
	n, err := c.ownerOf(ctx, slotOf(args))
	if err != nil {
		return Value{}, err
	}
	return c.doOn(ctx, n, false, args)
}

// doOn runs args on n (after ASKING when asking) and follows redirects.
func (c *Cluster) doOn(ctx context.Context, n *clusterNode, asking bool, args []any) (Value, error) {
	for range c.o.MaxRedirects {
		var v Value
		var err error
		if asking {
			v, err = n.askingDo(ctx, c.o.Options, args)
		} else {
			var cl *Client
			if cl, err = n.conn(ctx, c.o.Options); err != nil {
				return Value{}, err
			}
			v, err = cl.Do(ctx, args...)
		}
		var se *ServerError
		if !errors.As(err, &se) {
			return v, err
		}
		if se.Code == "TRYAGAIN" {
			if err := sleepCtx(ctx, 10*time.Millisecond); err != nil {
				return v, err
			}
			asking = false
			continue
		}
		rd, ok := parseRedirect(se)
		if !ok {
			return v, err
		}
		c.count(rd)
		if !rd.ask {
			if err := c.Refresh(ctx); err != nil {
				return v, err
			}
		}
		n, asking = c.node(rd.endpoint), rd.ask
	}
	return Value{}, fmt.Errorf("%w (%d)", ErrClusterRedirects, c.o.MaxRedirects)
}

// askingDo sends ASKING then args in one batch over the node's RESP
// connection (ASKING has no SBE encoding) and returns args' reply.
func (n *clusterNode) askingDo(ctx context.Context, o Options, args []any) (Value, error) {
	ctl, err := n.control(ctx, o)
	if err != nil {
		return Value{}, err
	}
	vs, err := ctl.Pipeline().Do("ASKING").Do(args...).Exec(ctx)
	if err != nil {
		return Value{}, err
	}
	if vs[1].Kind == KindError {
		return vs[1], vs[1].Err
	}
	return vs[1], nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Get returns key's value, or ErrNil when it is missing.
func (c *Cluster) Get(ctx context.Context, key string) ([]byte, error) {
	v, err := c.Do(ctx, "GET", key)
	switch {
	case err != nil:
		return nil, err
	case v.Kind == KindNil:
		return nil, ErrNil
	case v.Kind != KindBulk:
		return nil, fmt.Errorf("client: GET answered %s", v)
	}
	return v.Str, nil
}

// Set stores val at key, with SetOptions as Client.Set (NX or XX
// unmet: ErrNil).
func (c *Cluster) Set(ctx context.Context, key string, val []byte, o SetOptions) error {
	args := []any{"SET", key, val}
	if o.NX {
		args = append(args, "NX")
	}
	if o.XX {
		args = append(args, "XX")
	}
	if o.KeepTTL {
		args = append(args, "KEEPTTL")
	}
	if o.TTL > 0 {
		if ex, n := ttlExpiry(o.TTL); ex == command.ExpiryEX {
			args = append(args, "EX", n)
		} else {
			args = append(args, "PX", n)
		}
	}
	v, err := c.Do(ctx, args...)
	switch {
	case err != nil:
		return err
	case v.Kind == KindNil:
		return ErrNil
	case v.Kind != KindStatus:
		return fmt.Errorf("%w: SET answered %s", ErrUnexpectedReply, v)
	}
	return nil
}

// intDo runs args and returns their integer reply.
func (c *Cluster) intDo(ctx context.Context, args ...any) (int64, error) {
	v, err := c.Do(ctx, args...)
	if err != nil {
		return 0, err
	}
	if v.Kind != KindInt {
		return 0, fmt.Errorf("%w: %s answered %s", ErrUnexpectedReply, argText(args[0]), v)
	}
	return v.Int, nil
}

// Del removes keys, on whichever nodes hold them, and returns how many
// existed.
func (c *Cluster) Del(ctx context.Context, keys ...string) (int64, error) {
	return c.intDo(ctx, append([]any{"DEL"}, stringsToAny(keys)...)...)
}

// Exists returns how many of keys exist (a key named twice counts twice).
func (c *Cluster) Exists(ctx context.Context, keys ...string) (int64, error) {
	return c.intDo(ctx, append([]any{"EXISTS"}, stringsToAny(keys)...)...)
}

// Incr adds one to the integer at key and returns the result.
func (c *Cluster) Incr(ctx context.Context, key string) (int64, error) {
	return c.intDo(ctx, "INCR", key)
}

// IncrBy adds delta to the integer at key and returns the result.
func (c *Cluster) IncrBy(ctx context.Context, key string, delta int64) (int64, error) {
	return c.intDo(ctx, "INCRBY", key, delta)
}

// Expire sets key to expire after d (millisecond resolution) and reports
// whether the key exists.
func (c *Cluster) Expire(ctx context.Context, key string, d time.Duration) (bool, error) {
	n, err := c.intDo(ctx, "PEXPIRE", key, int64(d/time.Millisecond))
	return n == 1, err
}

// TTL returns the time key has left to live (millisecond resolution),
// NoExpiry when it has none, and ErrNil when it does not exist.
func (c *Cluster) TTL(ctx context.Context, key string) (time.Duration, error) {
	ms, err := c.intDo(ctx, "PTTL", key)
	switch {
	case err != nil:
		return 0, err
	case ms == -2:
		return 0, ErrNil
	case ms == -1:
		return NoExpiry, nil
	}
	return time.Duration(ms) * time.Millisecond, nil
}

func stringsToAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// MGet returns the values of keys (nil for a missing key) in order, across
// nodes: one MGET per slot, each node's MGETs in one pipeline, the nodes in
// parallel. When some nodes fail (one is down, say), the values from the
// others are returned with a *BatchError whose Errs[i] is key i's error.
func (c *Cluster) MGet(ctx context.Context, keys ...string) ([][]byte, error) {
	bySlot := map[uint16][]int{}
	var order []uint16
	for i, k := range keys {
		s := cluster.Slot([]byte(k))
		if _, ok := bySlot[s]; !ok {
			order = append(order, s)
		}
		bySlot[s] = append(bySlot[s], i)
	}
	p := c.Pipeline()
	for _, s := range order {
		args := []any{"MGET"}
		for _, i := range bySlot[s] {
			args = append(args, keys[i])
		}
		p.Do(args...)
	}
	vs, err := p.Exec(ctx)
	var be *BatchError
	if err != nil && !errors.As(err, &be) {
		return nil, err
	}
	out := make([][]byte, len(keys))
	var keyErrs []error
	fail := func(i int, err error) {
		if keyErrs == nil {
			keyErrs = make([]error, len(keys))
		}
		keyErrs[i] = err
	}
	for j, s := range order {
		v, idx := vs[j], bySlot[s]
		var err error
		switch {
		case be != nil && be.Errs[j] != nil:
			err = be.Errs[j]
		case v.Kind == KindError:
			err = v.Err
		case v.Kind != KindArray || len(v.Array) != len(idx):
			err = fmt.Errorf("%w: MGET answered %s", ErrUnexpectedReply, v)
		}
		for x, i := range idx {
			if err != nil {
				fail(i, err)
			} else if v.Array[x].Kind == KindBulk {
				out[i] = v.Array[x].Str
			}
		}
	}
	if keyErrs != nil {
		return out, &BatchError{Errs: keyErrs, What: "keys"}
	}
	return out, nil
}

// ClusterPipeline batches commands for a Cluster: Exec sends each node its
// commands as one pipeline, the nodes in parallel, and returns the replies
// in the order the commands were queued. A command redirected (MOVED, ASK,
// TRYAGAIN) is sent again on its own, following the redirect.
type ClusterPipeline struct {
	c    *Cluster
	cmds [][]any
}

// Pipeline starts an empty batch.
func (c *Cluster) Pipeline() *ClusterPipeline { return &ClusterPipeline{c: c} }

// Do queues a command.
func (p *ClusterPipeline) Do(args ...any) *ClusterPipeline {
	p.cmds = append(p.cmds, args)
	return p
}

// Len is the number of queued commands.
func (p *ClusterPipeline) Len() int { return len(p.cmds) }

// Exec sends the queued commands and returns one Value per command. Error
// replies are KindError values, as for Pipeline.Exec. A command that got
// no reply (its node is down, or no node owns its slot) leaves a zero
// Value and makes Exec return a *BatchError whose Errs[i] says why;
// commands on the other nodes still get their replies. It empties the
// pipeline.
func (p *ClusterPipeline) Exec(ctx context.Context) ([]Value, error) {
	cmds := p.cmds
	p.cmds = nil
	out := make([]Value, len(cmds))
	errs := make([]error, len(cmds)) // each goroutine writes only its own commands' cells
	groups := map[*clusterNode][]int{}
	for i, a := range cmds {
		if err := modeCommandOf(a); err != nil {
			return nil, fmt.Errorf("client: pipeline command %d: %w", i, err)
		}
		n, err := p.c.ownerOf(ctx, slotOf(a))
		if err != nil {
			errs[i] = err
			continue
		}
		groups[n] = append(groups[n], i)
	}
	var wg sync.WaitGroup
	for n, idx := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fail := func(err error) {
				for _, i := range idx {
					errs[i] = err
				}
			}
			cl, err := n.conn(ctx, p.c.o.Options)
			if err != nil {
				fail(err)
				return
			}
			np := cl.Pipeline()
			for _, i := range idx {
				np.Do(cmds[i]...)
			}
			vs, err := np.Exec(ctx)
			if err != nil {
				fail(fmt.Errorf("client: cluster node %s: %w", n.endpoint, err))
				return
			}
			for j, i := range idx {
				out[i] = vs[j]
			}
		}()
	}
	wg.Wait()
	for i, v := range out {
		if errs[i] != nil || v.Kind != KindError || (v.Err.Code != "MOVED" && v.Err.Code != "ASK" && v.Err.Code != "TRYAGAIN") {
			continue
		}
		n, err := p.c.ownerOf(ctx, slotOf(cmds[i]))
		if err == nil {
			if rd, ok := parseRedirect(v.Err); ok {
				p.c.count(rd)
				n = p.c.node(rd.endpoint)
				if !rd.ask {
					err = p.c.Refresh(ctx)
				}
				if err == nil {
					v, err = p.c.doOn(ctx, n, rd.ask, cmds[i])
				}
			} else {
				v, err = p.c.doOn(ctx, n, false, cmds[i])
			}
		}
		var se *ServerError
		if err != nil && !errors.As(err, &se) {
			out[i], errs[i] = Value{}, err
			continue
		}
		out[i] = v
	}
	for _, err := range errs {
		if err != nil {
			return out, &BatchError{Errs: errs, What: "commands"}
		}
	}
	return out, nil
}
