package javadriver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// CnC file facts (aeron CncFileDescriptor and Agrona RingBufferDescriptor,
// 1.51; see ../shared/aeron-protocol.md §3 and §5).
const (
	cncFile              = "cnc.dat"
	cncHeaderLength      = 128
	cncVersionOffset     = 0  // int32, written last by the driver: 0 = not ready
	cncToDriverLenOffset = 4  // int32, whole to-driver ring buffer incl. trailer
	cncStartOffset       = 32 // int64, the driver's start time, epoch ms
	cncPIDOffset         = 40 // int64, the driver's process id
	cncMajorVersion      = 0  // CNC_VERSION 0.2.0: major 0
	ringTrailerLength    = 768
	ringHeartbeatOffset  = 640 // trailer offset of the consumer (driver) heartbeat, epoch ms
)

// cncState is what the readiness check reads from a CnC file.
type cncState struct {
	version     int32
	pid         int64
	startMs     int64 // when the driver started, epoch ms
	heartbeatMs int64 // driver's epoch-ms stamp; -1 after a clean shutdown
}

var errCncNotReady = errors.New("cnc.dat not ready")

// readCnC reads the CnC header and the driver heartbeat with plain reads
// (pread), not a mapping: this package only polls, so it never needs the
// 46 MiB file in its address space.
//
// Concurrency: the driver writes these fields through its own mapping.
// version is stored last at start-up with release semantics, after the
// lengths and PID, so once a read sees a non-zero version the other header
// fields are complete. The heartbeat is an aligned int64 the driver stores
// (ordered) every timer interval; the kernel copies aligned words, and in
// any case a poll that saw a torn value would only judge the driver not yet
// ready and poll again.
func readCnC(dir string) (cncState, error) {
	f, err := os.Open(filepath.Join(dir, cncFile))
	if err != nil {
		return cncState{}, fmt.Errorf("%w: %w", errCncNotReady, err)
	}
	defer f.Close()
	var hdr [cncHeaderLength]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		if errors.Is(err, io.EOF) {
			return cncState{}, fmt.Errorf("%w: shorter than its header", errCncNotReady)
		}
		return cncState{}, err
	}
	le := binary.LittleEndian
	st := cncState{version: int32(le.Uint32(hdr[cncVersionOffset:]))}
	if st.version == 0 {
		return st, fmt.Errorf("%w: version not yet written", errCncNotReady)
	}
	if major := st.version >> 16; major != cncMajorVersion {
		return st, fmt.Errorf("%w: cnc.dat major version %d, want %d", ErrIncompatibleDriver, major, cncMajorVersion)
	}
	st.pid = int64(le.Uint64(hdr[cncPIDOffset:]))
	st.startMs = int64(le.Uint64(hdr[cncStartOffset:]))
	toDriver := int64(int32(le.Uint32(hdr[cncToDriverLenOffset:])))
	if toDriver < ringTrailerLength {
		return st, fmt.Errorf("%w: to-driver buffer length %d", ErrIncompatibleDriver, toDriver)
	}
	var hb [8]byte
	off := cncHeaderLength + toDriver - ringTrailerLength + ringHeartbeatOffset
	if _, err := f.ReadAt(hb[:], off); err != nil {
		return st, fmt.Errorf("%w: heartbeat: %w", errCncNotReady, err)
	}
	st.heartbeatMs = int64(le.Uint64(hb[:]))
	return st, nil
}
