package cluster

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/transport"
)

// ErrConfig is wrapped by every error about a cluster configuration.
var ErrConfig = errors.New("cluster: bad configuration")

// IDLen is the length of a node id: 40 hexadecimal digits, as Redis
// Cluster's node names (clients and redis-cli expect that shape).
const IDLen = 40

// Range is a run of slots, First to Last inclusive.
type Range struct{ First, Last uint16 }

// Node is one member of the cluster as the configuration file lists it.
type Node struct {
	// ID is the node's 40-hex-digit id.
	ID string
	// Addrs are the targets the node serves (tcp://, uds://, ring://,
	// aeron:udp?...), in the file's order; goblin's own cluster client
	// picks among them.
	Addrs []string
	// Host and Port are the node's first RESP-over-TCP address: the one
	// -MOVED, -ASK and CLUSTER SLOTS give Redis clients.
	Host string
	Port int
	// Slots are the ranges the node owns, in the file's order.
	Slots []Range
	// Master is the id of the node this one replicates, "" for a master.
	// Only the cluster bus (package cluster/member) sets it.
	Master string
	// Failed is true when the cluster bus agrees the node is down (FAIL):
	// CLUSTER SLOTS then leaves it out as a replica.
	Failed bool
	// Offset is the node's replication offset as last gossiped.
	Offset int64
}

// Endpoint returns "host:port", as redirects name a node.
func (n *Node) Endpoint() string { return net.JoinHostPort(n.Host, strconv.Itoa(n.Port)) }

// Config is a parsed cluster configuration file.
type Config struct {
	// Epoch is the configuration's epoch: raise it on every edit, so a node
	// still serving an older file is visible (CLUSTER INFO's
	// cluster_current_epoch, the client's staleness check).
	Epoch uint64
	// Myself is the id of the node reading the file ("myself" line); the
	// server's --cluster-node flag may supply or override it.
	Myself string
	// Nodes are every member, in the file's order.
	Nodes []Node
}

// Load reads and parses the configuration file at path; myself, when not
// empty, overrides the file's "myself" line.
func Load(path, myself string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if myself != "" {
		c.Myself = myself
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Parse reads a configuration in the file's syntax (docs/cluster.md):
//
//	# comment
//	epoch 7
//	myself 8f1c...
//	node 8f1c... tcp://10.0.0.1:6380 aeron:udp?endpoint=10.0.0.1:40123 slots 0-5460
//	node 2be0... tcp://10.0.0.2:6380 slots 5461-10922 16000
//
// It checks each line; Validate checks the whole (call it once Myself is
// final).
func Parse(data []byte) (*Config, error) {
	c := &Config{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line, sawEpoch := 0, false
	for sc.Scan() {
		line++
		text, _, _ := strings.Cut(sc.Text(), "#")
		words := strings.Fields(text)
		if len(words) == 0 {
			continue
		}
		fail := func(format string, a ...any) (*Config, error) {
			return nil, fmt.Errorf("%w: line %d: %s", ErrConfig, line, fmt.Sprintf(format, a...))
		}
		switch words[0] {
		case "epoch":
			if len(words) != 2 || sawEpoch {
				return fail("want one \"epoch N\" line")
			}
			e, err := strconv.ParseUint(words[1], 10, 64)
			if err != nil {
				return fail("epoch %q is not a non-negative integer", words[1])
			}
			c.Epoch, sawEpoch = e, true
		case "myself":
			if len(words) != 2 || c.Myself != "" {
				return fail("want one \"myself ID\" line")
			}
			c.Myself = words[1]
		case "node":
			n, err := parseNode(words[1:])
			if err != nil {
				return fail("%v", err)
			}
			c.Nodes = append(c.Nodes, n)
		default:
			return fail("unknown keyword %q (want epoch, myself or node)", words[0])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if !sawEpoch {
		return nil, fmt.Errorf("%w: no \"epoch N\" line", ErrConfig)
	}
	return c, nil
}

// parseNode reads "ID ADDR... [slots RANGE...]".
func parseNode(words []string) (Node, error) {
	var n Node
	if len(words) == 0 {
		return n, errors.New("node needs an id and addresses")
	}
	n.ID = words[0]
	if !ValidID(n.ID) {
		return n, fmt.Errorf("node id %q is not %d hexadecimal digits", n.ID, IDLen)
	}
	i := 1
	for ; i < len(words) && words[i] != "slots"; i++ {
		t, err := transport.ParseTarget(words[i])
		if err != nil {
			return n, fmt.Errorf("node %s: address %q: %v", short(n.ID), words[i], err)
		}
		n.Addrs = append(n.Addrs, words[i])
		if t.Scheme == transport.TCP && t.Proto == proto.RESP && n.Host == "" {
			host, port, err := net.SplitHostPort(t.Address)
			p, perr := strconv.Atoi(port)
			if err != nil || perr != nil || p <= 0 || p > 65535 || host == "" {
				return n, fmt.Errorf("node %s: address %q: want tcp://host:port", short(n.ID), words[i])
			}
			n.Host, n.Port = host, p
		}
	}
	if n.Host == "" {
		return n, fmt.Errorf("node %s has no RESP tcp://host:port address (Redis clients are redirected to it)", short(n.ID))
	}
	for _, w := range words[min(i+1, len(words)):] {
		r, err := parseRange(w)
		if err != nil {
			return n, fmt.Errorf("node %s: %v", short(n.ID), err)
		}
		n.Slots = append(n.Slots, r)
	}
	return n, nil
}

// parseRange reads "N" or "FIRST-LAST".
func parseRange(w string) (Range, error) {
	a, b, dash := strings.Cut(w, "-")
	first, err1 := strconv.ParseUint(a, 10, 16)
	last, err2 := first, error(nil)
	if dash {
		last, err2 = strconv.ParseUint(b, 10, 16)
	}
	if err1 != nil || err2 != nil || first >= Slots || last >= Slots || last < first {
		return Range{}, fmt.Errorf("slot range %q: want N or FIRST-LAST within 0-%d", w, Slots-1)
	}
	return Range{uint16(first), uint16(last)}, nil
}

// ValidID reports whether id is a node id: IDLen lower-case hexadecimal
// digits.
func ValidID(id string) bool {
	if len(id) != IDLen {
		return false
	}
	for _, c := range []byte(id) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func short(id string) string { return id[:min(len(id), 8)] }

// Validate checks the configuration as a whole: node ids unique, Myself
// one of them, every slot owned by at most one node. Slots owned by none
// are allowed (CLUSTER INFO then reports cluster_state:fail and keys
// hashing there get -CLUSTERDOWN), as during a cluster's set-up.
func (c *Config) Validate() error {
	var owner [Slots]int16
	me := -1
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if n.ID == c.Myself {
			me = i
		}
		for j := range i {
			if c.Nodes[j].ID == n.ID {
				return fmt.Errorf("%w: node %s is listed twice", ErrConfig, n.ID)
			}
		}
		for _, r := range n.Slots {
			for s := int(r.First); s <= int(r.Last); s++ {
				if o := owner[s]; o != 0 {
					return fmt.Errorf("%w: slot %d is given to node %s and node %s", ErrConfig, s, short(c.Nodes[o-1].ID), short(n.ID))
				}
				owner[s] = int16(i + 1)
			}
		}
	}
	if c.Myself == "" {
		return fmt.Errorf("%w: no \"myself ID\" line and no --cluster-node: which node is this?", ErrConfig)
	}
	if me < 0 {
		return fmt.Errorf("%w: myself %q is not one of the nodes", ErrConfig, c.Myself)
	}
	return nil
}

// Format writes c in the file's syntax (Parse reads it back), for
// CLUSTER SAVECONFIG-like tooling and tests.
func (c *Config) Format() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "epoch %d\n", c.Epoch)
	if c.Myself != "" {
		fmt.Fprintf(&b, "myself %s\n", c.Myself)
	}
	for _, n := range c.Nodes {
		b.WriteString(n.line())
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// Rewrite writes c over file, the configuration file it came from
// (CLUSTER SAVECONFIG): the epoch line, the myself line (kept as it was
// when c has no Myself: a shared file names no node) and each node's line
// take c's values in place; comments, blank lines and the order stay; a
// node c no longer has loses its line, and what the file lacked is added
// at the end.
func (c *Config) Rewrite(file []byte) []byte {
	var b bytes.Buffer
	wrote := map[string]bool{}
	sawEpoch, sawMyself := false, false
	for len(file) > 0 {
		line, rest, nl := bytes.Cut(file, []byte("\n"))
		file = rest
		text, comment, hasComment := strings.Cut(string(line), "#")
		words := strings.Fields(text)
		out, keep := string(line), true
		if len(words) > 0 {
			indent := text[:len(text)-len(strings.TrimLeft(text, " \t"))]
			switch words[0] {
			case "epoch":
				out, sawEpoch = indent+"epoch "+strconv.FormatUint(c.Epoch, 10), true
			case "myself":
				sawMyself = true
				if c.Myself != "" {
					out = indent + "myself " + c.Myself
				} else {
					hasComment = false // as it was, comment and all
				}
			case "node":
				keep = false
				for _, n := range c.Nodes {
					if len(words) > 1 && n.ID == words[1] && !wrote[n.ID] {
						out, keep, wrote[n.ID] = indent+n.line(), true, true
					}
				}
			}
			if hasComment {
				out += " #" + comment
			}
		}
		if !keep {
			continue
		}
		b.WriteString(out)
		if nl {
			b.WriteByte('\n')
		}
	}
	if b.Len() > 0 && !bytes.HasSuffix(b.Bytes(), []byte("\n")) {
		b.WriteByte('\n')
	}
	if !sawEpoch {
		fmt.Fprintf(&b, "epoch %d\n", c.Epoch)
	}
	if !sawMyself && c.Myself != "" {
		fmt.Fprintf(&b, "myself %s\n", c.Myself)
	}
	for _, n := range c.Nodes {
		if !wrote[n.ID] {
			b.WriteString(n.line())
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// line is n's "node" line, without a newline.
func (n *Node) line() string {
	var b strings.Builder
	b.WriteString("node " + n.ID)
	for _, a := range n.Addrs {
		b.WriteString(" " + a)
	}
	if len(n.Slots) > 0 {
		b.WriteString(" slots")
		for _, r := range n.Slots {
			if r.First == r.Last {
				fmt.Fprintf(&b, " %d", r.First)
			} else {
				fmt.Fprintf(&b, " %d-%d", r.First, r.Last)
			}
		}
	}
	return b.String()
}
