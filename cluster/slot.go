// Package cluster is goblin's Redis Cluster membership: the key-to-slot
// hash every cluster client computes (CRC16 of the key, or of its hash tag,
// modulo 16384), the cluster configuration file that says which node owns
// which slots and where each node listens, and the State a node keeps of
// it at run time (slot owners, slots being moved, the config epoch).
//
// Two sources fill the State. With --cluster-enabled, package
// cluster/member runs Redis 7.0's cluster bus (gossip, failure detection,
// failover, nodes.conf) and replaces the State on every change. Without
// it, the static configuration file is the source of truth: every node
// loads the same file, and an operator changes the cluster by editing it
// and reloading (SIGHUP or CLUSTER RELOAD), or live with the CLUSTER
// SETSLOT sequence redis-cli --cluster reshard drives. docs/cluster.md is
// the operator's page.
//
// State is used by the server's loop goroutine only, like the store.
package cluster

// Slots is the number of hash slots, as in Redis Cluster.
const Slots = 16384

// crcTable is CRC16/XMODEM's table (polynomial 0x1021, initial value 0,
// no reflection): the checksum Redis Cluster hashes keys with.
var crcTable = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// CRC16 returns the CRC16/XMODEM checksum of b.
func CRC16(b []byte) uint16 {
	var c uint16
	for _, x := range b {
		c = c<<8 ^ crcTable[byte(c>>8)^x]
	}
	return c
}

// Slot returns the hash slot of key: CRC16 of its hash tag when it has
// one, else of the whole key, modulo Slots. The hash tag is what lies
// between the first '{' and the first '}' after it, when that is not
// empty ("{user1000}.following" and "{user1000}.followers" share a slot;
// "{}x" hashes whole). It does not allocate.
func Slot(key []byte) uint16 {
	for i, c := range key {
		if c != '{' {
			continue
		}
		for j := i + 1; j < len(key); j++ {
			if key[j] == '}' {
				if j > i+1 {
					key = key[i+1 : j]
				}
				return CRC16(key) & (Slots - 1)
			}
		}
		break
	}
	return CRC16(key) & (Slots - 1)
}
