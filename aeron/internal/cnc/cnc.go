// Package cnc is the layout of an Aeron command-and-control file, cnc.dat
// (Java: CncFileDescriptor): a 128-byte metadata header, then the
// to-driver ring buffer, the to-clients broadcast buffer, the counters
// metadata and values and the distinct error log, back to back. goblin's
// media driver creates it (Lengths, FillMetadata, SignalReady) and its
// client and tools map it (Parse); both use this one description.
package cnc

import (
	"errors"
	"fmt"

	"github.com/goblin-kv/goblin/internal/shm"
)

// FileName is the CnC file's name in the Aeron directory.
const FileName = "cnc.dat"

// Version is the CnC layout version, 0.2.0 packed as a semantic version
// (major<<16 | minor<<8 | patch), as in Aeron 1.49 through 1.52.
const Version int32 = 0x200

// Metadata header field offsets.
const (
	VersionOffset               = 0  // int32: written last, with release ("ready")
	ToDriverLengthOffset        = 4  // int32
	ToClientsLengthOffset       = 8  // int32
	CountersMetaLengthOffset    = 12 // int32
	CountersValuesLengthOffset  = 16 // int32
	ErrorLogLengthOffset        = 20 // int32
	ClientLivenessTimeoutOffset = 24 // int64 ns
	StartTimestampOffset        = 32 // int64 epoch ms
	PIDOffset                   = 40 // int64
	FilePageSizeOffset          = 48 // int32
	MetadataLength              = 128
)

// ErrNotReady means the driver has not yet stored the version.
var ErrNotReady = errors.New("the driver has not finished creating the CnC file")

// ErrVersion means the file's major version differs from Version, or its
// minor version is older.
var ErrVersion = errors.New("incompatible CnC version")

// Lengths are the section lengths, in file order.
type Lengths struct {
	ToDriver       int
	ToClients      int
	CountersMeta   int
	CountersValues int
	ErrorLog       int
}

// Sum is the bytes of all sections.
func (l Lengths) Sum() int {
	return l.ToDriver + l.ToClients + l.CountersMeta + l.CountersValues + l.ErrorLog
}

// FileLength is the file's length: header and sections rounded up to a page.
func (l Lengths) FileLength(pageSize int) int {
	return shm.Align(MetadataLength+l.Sum(), pageSize)
}

// Sections are views of a mapped file's sections.
type Sections struct {
	ToDriver       []byte
	ToClients      []byte
	CountersMeta   []byte
	CountersValues []byte
	ErrorLog       []byte
}

// Slice cuts data (a whole file) into its sections.
func (l Lengths) Slice(data []byte) Sections {
	var s Sections
	off := MetadataLength
	for _, p := range []struct {
		dst *[]byte
		n   int
	}{{&s.ToDriver, l.ToDriver}, {&s.ToClients, l.ToClients}, {&s.CountersMeta, l.CountersMeta},
		{&s.CountersValues, l.CountersValues}, {&s.ErrorLog, l.ErrorLog}} {
		*p.dst = data[off : off+p.n : off+p.n]
		off += p.n
	}
	return s
}

// Metadata is what the header holds besides the section lengths.
type Metadata struct {
	ClientLivenessTimeoutNs int64
	StartTimestampMs        int64
	PID                     int64
	FilePageSize            int32
}

// FillMetadata writes the header of a new (zeroed) file in the order the
// real drivers write it, leaving the version 0: call SignalReady once the
// sections are initialised.
func FillMetadata(data []byte, l Lengths, m Metadata) {
	shm.PutInt32(data, ToDriverLengthOffset, int32(l.ToDriver))
	shm.PutInt32(data, ToClientsLengthOffset, int32(l.ToClients))
	shm.PutInt32(data, CountersMetaLengthOffset, int32(l.CountersMeta))
	shm.PutInt32(data, CountersValuesLengthOffset, int32(l.CountersValues))
	shm.PutInt32(data, ErrorLogLengthOffset, int32(l.ErrorLog))
	shm.PutInt64(data, ClientLivenessTimeoutOffset, m.ClientLivenessTimeoutNs)
	shm.PutInt64(data, StartTimestampOffset, m.StartTimestampMs)
	shm.PutInt64(data, PIDOffset, m.PID)
	shm.PutInt32(data, FilePageSizeOffset, m.FilePageSize)
}

// SignalReady stores the version (release): a client that acquires a
// non-zero version sees every section initialised.
func SignalReady(data []byte) { shm.StoreInt32Release(data, VersionOffset, Version) }

// LoadVersion reads the version (acquire); 0 means not ready.
func LoadVersion(data []byte) int32 { return shm.LoadInt32Acquire(data, VersionOffset) }

// CheckVersion accepts v when its major version equals Version's and its
// minor version is not older (the Java client's rule).
func CheckVersion(v int32) error {
	if v>>16 != Version>>16 || (v>>8)&0xFF < (Version>>8)&0xFF {
		return fmt.Errorf("%w: driver has %d.%d.%d, client needs %d.%d.x", ErrVersion,
			v>>16, (v>>8)&0xFF, v&0xFF, Version>>16, (Version>>8)&0xFF)
	}
	return nil
}

// Parse checks a mapped file's version and length and returns its section
// lengths and metadata.
func Parse(data []byte) (Lengths, Metadata, error) {
	if len(data) < MetadataLength {
		return Lengths{}, Metadata{}, fmt.Errorf("cnc file of %d bytes is too short", len(data))
	}
	v := LoadVersion(data)
	if v == 0 {
		return Lengths{}, Metadata{}, ErrNotReady
	}
	if err := CheckVersion(v); err != nil {
		return Lengths{}, Metadata{}, err
	}
	l := Lengths{
		ToDriver:       int(shm.GetInt32(data, ToDriverLengthOffset)),
		ToClients:      int(shm.GetInt32(data, ToClientsLengthOffset)),
		CountersMeta:   int(shm.GetInt32(data, CountersMetaLengthOffset)),
		CountersValues: int(shm.GetInt32(data, CountersValuesLengthOffset)),
		ErrorLog:       int(shm.GetInt32(data, ErrorLogLengthOffset)),
	}
	for _, n := range []int{l.ToDriver, l.ToClients, l.CountersMeta, l.CountersValues, l.ErrorLog} {
		if n < 0 {
			return Lengths{}, Metadata{}, errors.New("cnc file has a negative section length")
		}
	}
	if total := MetadataLength + l.Sum(); total > len(data) {
		return Lengths{}, Metadata{}, fmt.Errorf("cnc file of %d bytes is shorter than its sections (%d)", len(data), total)
	}
	m := Metadata{
		ClientLivenessTimeoutNs: shm.GetInt64(data, ClientLivenessTimeoutOffset),
		StartTimestampMs:        shm.GetInt64(data, StartTimestampOffset),
		PID:                     shm.GetInt64(data, PIDOffset),
		FilePageSize:            shm.GetInt32(data, FilePageSizeOffset),
	}
	return l, m, nil
}
