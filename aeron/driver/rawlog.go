package driver

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
)

// Subdirectories of the Aeron directory that hold log buffers.
const (
	publicationsDir = "publications"
	imagesDir       = "images"
)

// rawLog is one log buffer file the driver created and keeps mapped: the
// conductor reads its tails, writes its metadata, cleans consumed terms
// and unblocks stalled publishers through this mapping.
type rawLog struct {
	path       string
	data       []byte
	terms      [logbuffer.PartitionCount][]byte
	meta       []byte
	termLength int
	// mapped: the log's length is counted in bytes currently mapped
	// (counter 35), from its creation until it is handed to be freed.
	mapped bool
	// deleted: release removed the file.
	deleted bool
	// imageCharge: the bytes an image's log counts in Driver.imagesLength,
	// from the image's creation until the releaser reports the log freed
	// (0 for other logs). Written by the conductor, and read by the
	// releaser only while it owns the log.
	imageCharge int64
}

// errStorageSpace marks a log that does not fit the file system; the
// client gets error code STORAGE_SPACE.
var errStorageSpace = errors.New("insufficient usable storage")

// newRawLog creates dir/<registrationID>.logbuffer (it must not exist),
// sized for termLength, sparse or allocated whole, and maps it.
func (c *conductor) newRawLog(dir string, registrationID int64, termLength int, sparse bool) (*rawLog, error) {
	length := logbuffer.ComputeLogLength(termLength, c.opts.FilePageSize)
	if err := c.checkStorage(dir, int64(length)); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, strconv.FormatInt(registrationID, 10)+".logbuffer")
	f, err := createExclusive(path, c.opts.FilePerm)
	if err != nil {
		return nil, fmt.Errorf("create log buffer: %w", err)
	}
	defer f.Close()
	if err := f.Truncate(int64(length)); err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("size log buffer %s: %w", path, err)
	}
	if !sparse {
		// The Java driver touches every page, the C driver fallocates:
		// either way the file is backed now, not on the publisher's
		// first write.
		if err := unix.Fallocate(int(f.Fd()), 0, 0, int64(length)); err != nil {
			os.Remove(path)
			return nil, fmt.Errorf("allocate log buffer %s: %w", path, err)
		}
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, length, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("map log buffer %s: %w", path, err)
	}
	l := &rawLog{path: path, data: data, meta: data[length-logbuffer.MetadataLength:], termLength: termLength}
	for i := range l.terms {
		l.terms[i] = data[i*termLength : (i+1)*termLength : (i+1)*termLength]
	}
	c.counters.AddValue(sysBytesCurrentlyMapped, int64(length))
	l.mapped = true
	return l, nil
}

// checkStorage refuses a log the file system has no room for and warns
// when room is running low (FileStoreLogFactory.checkStorage).
func (c *conductor) checkStorage(dir string, length int64) error {
	if c.opts.NoStorageChecks {
		return nil
	}
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return fmt.Errorf("statfs %s: %w", dir, err)
	}
	usable := int64(st.Bavail) * st.Bsize
	if usable < length {
		return fmt.Errorf("%w for new log of length=%d usable=%d in %s", errStorageSpace, length, usable, dir)
	}
	if usable <= c.opts.LowStorageWarning {
		c.warn(fmt.Sprintf("WARN - space is running low: threshold=%d usable=%d in %s", c.opts.LowStorageWarning, usable, dir))
	}
	return nil
}

// freeRawLog unmaps the log and deletes its file, in the calling
// goroutine (the conductor's logs of closed resources go to the releaser
// instead: freeEndOfLife).
func (c *conductor) freeRawLog(l *rawLog) error {
	c.unaccountMapping(l)
	return l.release()
}

// unaccountMapping takes the log out of bytes currently mapped, once.
func (c *conductor) unaccountMapping(l *rawLog) {
	if l.mapped {
		l.mapped = false
		c.counters.AddValue(sysBytesCurrentlyMapped, -int64(len(l.data)))
	}
}

// release deletes the log's file and then unmaps it (unless a failed
// release already did either). It touches nothing but l: the releaser
// runs it. Deleting first, while the driver still maps the file, leaves
// the work of freeing its pages to the unmap, one system call instead of
// two, so the releaser asks the scheduler for the driver's processor once
// (with GOMAXPROCS=1 each hand-off is a wait for the runtime's monitor).
func (l *rawLog) release() error {
	if !l.deleted {
		if err := os.Remove(l.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		l.deleted = true
	}
	if l.data != nil {
		if err := shm.Unmap(l.data); err != nil {
			return err
		}
		l.data, l.meta, l.terms = nil, nil, [logbuffer.PartitionCount][]byte{}
	}
	return nil
}

// logMetadata is what the driver writes into a new log's metadata
// (DriverConductor.initLogMetadata).
type logMetadata struct {
	logType                 byte
	sessionID, streamID     int32
	initialTermID           int32
	termOffset              int32
	mtu                     int32
	registrationID          int64
	socketRcvbuf            int32
	socketSndbuf            int32
	receiverWindow          int32
	publicationWindow       int32
	tether, rejoin          bool
	reliable, sparse        bool
	group, isResponse       bool
	signalEOS, ssc          bool
	untetheredWindowLimitNs int64
	untetheredLingerNs      int64
	untetheredRestingNs     int64
	maxResend               int32
	lingerNs                int64
	entityTag               int64
	responseCorrelationID   int64
}

// osSocketBuffers are the OS default and maximum socket buffer sizes the
// real drivers record in every log (they probe a socket; Linux publishes
// the same numbers in /proc/sys/net/core).
type osSocketBuffers struct {
	defaultSndbuf, maxSndbuf, defaultRcvbuf, maxRcvbuf int32
}

func readOSSocketBuffers() osSocketBuffers {
	read := func(name string, def int32) int32 {
		b, err := os.ReadFile("/proc/sys/net/core/" + name)
		if err != nil {
			return def
		}
		n, err := strconv.ParseInt(string(trimSpace(b)), 10, 32)
		if err != nil {
			return def
		}
		return int32(n)
	}
	return osSocketBuffers{
		defaultSndbuf: read("wmem_default", 212992), maxSndbuf: read("wmem_max", 212992),
		defaultRcvbuf: read("rmem_default", 212992), maxRcvbuf: read("rmem_max", 212992),
	}
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}

func putBool(b []byte, off int, v bool) {
	if v {
		b[off] = 1
	} else {
		b[off] = 0
	}
}

// initMetadata writes a new log's metadata in the Java driver's order and
// stores the end-of-stream position last, with release: a client that
// maps the log after the driver's reply sees every field.
func (l *rawLog) initMetadata(m *logMetadata, pageSize int, osb osSocketBuffers) {
	meta := l.meta
	h := meta[logbuffer.DefaultFrameHeaderOffset : logbuffer.DefaultFrameHeaderOffset+logbuffer.HeaderLength]
	shm.PutInt32(h, logbuffer.FrameLengthOffset, 0)
	h[logbuffer.FrameVersionOffset] = 0
	h[logbuffer.FrameFlagsOffset] = logbuffer.FlagsUnfragmented
	shm.PutUint16(h, logbuffer.FrameTypeOffset, logbuffer.FrameTypeData)
	shm.PutInt32(h, logbuffer.FrameTermOffsetOffset, m.termOffset)
	shm.PutInt32(h, logbuffer.FrameSessionIDOffset, m.sessionID)
	shm.PutInt32(h, logbuffer.FrameStreamIDOffset, m.streamID)
	shm.PutInt32(h, logbuffer.FrameTermIDOffset, m.initialTermID)
	shm.PutInt64(h, logbuffer.FrameReservedValueOffset, 0)
	shm.PutInt32(meta, logbuffer.DefaultFrameHeaderLengthOffset, logbuffer.HeaderLength)

	shm.PutInt64(meta, logbuffer.CorrelationIDOffset, m.registrationID)
	shm.PutInt32(meta, logbuffer.InitialTermIDOffset, m.initialTermID)
	shm.PutInt32(meta, logbuffer.MTULengthOffset, m.mtu)
	shm.PutInt32(meta, logbuffer.TermLengthOffset, int32(l.termLength))
	shm.PutInt32(meta, logbuffer.PageSizeOffset, int32(pageSize))

	shm.PutInt32(meta, logbuffer.PublicationWindowLengthOffset, m.publicationWindow)
	shm.PutInt32(meta, logbuffer.ReceiverWindowLengthOffset, m.receiverWindow)
	shm.PutInt32(meta, logbuffer.SocketSndbufLengthOffset, m.socketSndbuf)
	shm.PutInt32(meta, logbuffer.OSDefaultSocketSndbufOffset, osb.defaultSndbuf)
	shm.PutInt32(meta, logbuffer.OSMaxSocketSndbufOffset, osb.maxSndbuf)
	shm.PutInt32(meta, logbuffer.SocketRcvbufLengthOffset, m.socketRcvbuf)
	shm.PutInt32(meta, logbuffer.OSDefaultSocketRcvbufOffset, osb.defaultRcvbuf)
	shm.PutInt32(meta, logbuffer.OSMaxSocketRcvbufOffset, osb.maxRcvbuf)
	shm.PutInt32(meta, logbuffer.MaxResendOffset, m.maxResend)

	putBool(meta, logbuffer.RejoinOffset, m.rejoin)
	putBool(meta, logbuffer.ReliableOffset, m.reliable)
	putBool(meta, logbuffer.SparseOffset, m.sparse)
	putBool(meta, logbuffer.SignalEOSOffset, m.signalEOS)
	putBool(meta, logbuffer.SpiesSimulateConnectionOffset, m.ssc)
	putBool(meta, logbuffer.TetherOffset, m.tether)
	putBool(meta, logbuffer.IsPublicationRevokedOffset, false)
	putBool(meta, logbuffer.GroupOffset, m.group)
	putBool(meta, logbuffer.IsResponseOffset, m.isResponse)
	meta[logbuffer.TypeOffset] = m.logType

	shm.PutInt64(meta, logbuffer.EntityTagOffset, m.entityTag)
	shm.PutInt64(meta, logbuffer.ResponseCorrelationIDOffset, m.responseCorrelationID)
	shm.PutInt64(meta, logbuffer.UntetheredWindowLimitOffset, m.untetheredWindowLimitNs)
	shm.PutInt64(meta, logbuffer.UntetheredLingerTimeoutOffset, m.untetheredLingerNs)
	shm.PutInt64(meta, logbuffer.UntetheredRestingTimeoutOffset, m.untetheredRestingNs)
	shm.PutInt64(meta, logbuffer.LingerTimeoutOffset, m.lingerNs)

	// Release: the last store, as in the Java driver, orders every field
	// above before it for a client that reads the position with acquire.
	shm.StoreInt64Release(meta, logbuffer.EndOfStreamPositionOffset, math.MaxInt64)
}

// initTails sets the partition tails of a new publication log
// (DriverConductor.initialisePositionCounters): without a starting
// position, partition 0 at the initial term and the others holding the
// "term id − 3" placeholders rotation expects; with one, the active
// partition at the starting term and offset.
func (l *rawLog) initTails(initialTermID int32, hasPosition bool, termID, termOffset int32) {
	if !hasPosition {
		termID, termOffset = initialTermID, 0
	}
	termCount := termID - initialTermID
	active := int(termCount) % logbuffer.PartitionCount
	shm.PutInt64(l.meta, logbuffer.TermTailCountersOffset+8*active, logbuffer.PackTail(termID, termOffset))
	for i := 1; i < logbuffer.PartitionCount; i++ {
		index := (active + i) % logbuffer.PartitionCount
		expected := termID + int32(i) - logbuffer.PartitionCount
		shm.PutInt64(l.meta, logbuffer.TermTailCountersOffset+8*index, logbuffer.PackTail(expected, 0))
	}
	shm.PutInt32(l.meta, logbuffer.ActiveTermCountOffset, termCount)
}
