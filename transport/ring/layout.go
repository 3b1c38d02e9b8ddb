package ring

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/internal/shm"
)

// The layout of one client's shared memory, a memfd the server creates and
// hands the client over the handshake socket: a header page, then the
// request ring (client → server), then the reply ring (server → client),
// each starting on a page boundary.
//
//	0      magic       int64  "GOBLRNG1"
//	8      version     int32
//	12     proto       int32  proto.Protocol the server speaks on this ring
//	16     records     int32  records per ring (a power of two)
//	20     recordSize  int32  bytes per record, header included (multiple of 64)
//	24     epoch       int64  the server instance that made the file
//	32     serverPID   int32
//	36     clientPID   int32  as the kernel reported it (SO_PEERCRED)
//	40     clientID    int64
//	48     flags       int32  flagBarrier: the server issues membarrier before parking
//	56     maxMessage  int64  the longest request message the server accepts
//	128    serverBeat  int64  own 128-byte block: server heartbeat counter
//	256    serverState int64  own 128-byte block: stateClosed once the server closed
//	384    clientState int64  own 128-byte block: stateClosed once the client closed
//	512    serverParked int64 own 128-byte block: 1 while the server loop is
//	                          (about to be) parked and wants the doorbell rung
//	4096   request ring
//	…      reply ring
//
// Fields up to offset 128 are written by the server before it sends the
// memfd over the handshake socket and never change afterwards; the client
// reads them after receiving it, and the socket's system calls order the
// two. The four words after them are the only header fields
// written while the rings run, each in its own pair of cache lines, far from
// the rings' index lines. serverParked is the one word both sides write: the
// server sets it before it parks and clears it when it wakes, and a client
// clears it (compare-and-swap) when it rings the doorbell; see doorbell.go.
const (
	magic        = int64(0x31474e524c424f47) // "GOBLRNG1" little-endian
	version      = 2                         // 2: fragments, memfds, the server's protocol in the answer
	pageSize     = 4096
	offMagic     = 0
	offVersion   = 8
	offProto     = 12
	offRecords   = 16
	offRecSize   = 20
	offEpoch     = 24
	offServerPID = 32
	offClientPID = 36
	offClientID  = 40
	offFlags     = 48
	offMaxMsg    = 56
	flagBarrier  = 1 // the server fences clients with membarrier before it parks (doorbell.go)
	offBeat      = 128
	offSrvState  = 256
	offCliState  = 384
	offParked    = 512
	stateClosed  = 1
)

// geometry is where the two rings sit in a file.
type geometry struct {
	records, recordSize int
	reqBase, repBase    int
	size                int
}

func pageAlign(n int) int { return (n + pageSize - 1) &^ (pageSize - 1) }

func newGeometry(records, recordSize int) geometry {
	g := geometry{records: records, recordSize: recordSize, reqBase: pageSize}
	g.repBase = g.reqBase + pageAlign(ringBytes(records, recordSize))
	g.size = g.repBase + pageAlign(ringBytes(records, recordSize))
	return g
}

// staggerLines is what LaidOutRecordSize adds to a record size that is a
// multiple of the page size: two cache lines, so records stay 128-byte
// aligned (the adjacent-line prefetcher's pairs) and a small message's
// record still starts a pair.
const staggerLines = 2 * cacheLine

// LaidOutRecordSize is the size of the records a server configured with
// Options.RecordSize = recordSize lays its rings out with, the one it
// writes into the file's header for its clients: recordSize, or
// staggerLines more for a multiple of the page size. A message of up to
// LaidOutRecordSize(recordSize)-8 bytes travels in one record.
//
// Records a multiple of 4096 bytes apart all sit at the same page offset,
// so every record's first cache line falls in the same L1 set (and its
// loads alias the previous records' stores in the store buffer's 4K
// check). Measured across two cores (BenchmarkRecordLines, records of
// 16384 and 16512 bytes), an SBE GET's 59-byte request and 46-byte reply
// took 210-250 ns a round trip at 16384 and 161-180 at 16512, as a
// 16-byte PING's does at either (docs/results/transport-latency.md,
// session 12). Clients of any release read the size from the header, so
// the layout needs no new version.
func LaidOutRecordSize(recordSize int) int {
	if recordSize%pageSize == 0 && recordSize+staggerLines <= maxRecordCap {
		return recordSize + staggerLines
	}
	return recordSize
}

// checkGeometry validates records and recordSize as Options and file headers
// carry them.
func checkGeometry(records, recordSize int) error {
	if records < 2 || records > 1<<20 || records&(records-1) != 0 {
		return fmt.Errorf("ring: %d records per ring: want a power of two between 2 and %d", records, 1<<20)
	}
	if recordSize < minRecord || recordSize > maxRecordCap || recordSize%cacheLine != 0 {
		return fmt.Errorf("ring: record size %d: want a multiple of %d between %d and %d", recordSize, cacheLine, minRecord, maxRecordCap)
	}
	return nil
}

// prefault maps every page of a fresh mapping into this process now, so the
// first lap around each ring does not take a page fault per record on the
// message path. Best effort: kernels before 5.14 lack MADV_POPULATE_WRITE
// and simply fault later.
func prefault(mem []byte) {
	_ = unix.Madvise(mem, unix.MADV_POPULATE_WRITE)
}

// errBadFile is wrapped when a mapped file is not a goblin ring file.
var errBadFile = errors.New("ring: not a goblin ring file")

// readHeader validates a mapped file and returns its geometry.
func readHeader(mem []byte) (geometry, error) {
	if len(mem) < pageSize {
		return geometry{}, fmt.Errorf("%w: %d bytes", errBadFile, len(mem))
	}
	// Plain reads: the server wrote these before sending the file name (see
	// the layout comment).
	if shm.GetInt64(mem, offMagic) != magic {
		return geometry{}, fmt.Errorf("%w: bad magic", errBadFile)
	}
	if v := shm.GetInt32(mem, offVersion); v != version {
		return geometry{}, fmt.Errorf("%w: version %d, want %d", errBadFile, v, version)
	}
	records, size := int(shm.GetInt32(mem, offRecords)), int(shm.GetInt32(mem, offRecSize))
	if err := checkGeometry(records, size); err != nil {
		return geometry{}, fmt.Errorf("%w: %w", errBadFile, err)
	}
	g := newGeometry(records, size)
	if len(mem) < g.size {
		return geometry{}, fmt.Errorf("%w: %d bytes, want %d", errBadFile, len(mem), g.size)
	}
	return g, nil
}
