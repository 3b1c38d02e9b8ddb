package aeron

import (
	"github.com/goblin-kv/goblin/internal/shm"
)

// Counter layout in the CnC file: a 512-byte metadata record and a 128-byte
// value record per counter id.
const (
	counterMetadataLength = 512
	counterValueLength    = 128

	cmState          = 0
	cmTypeID         = 4
	cmFreeForReuse   = 8
	cmKey            = 16
	cmLabelLength    = 128
	cmLabel          = 132
	counterMaxKey    = 112
	counterMaxLabel  = 380
	cvRegistrationID = 8
	cvOwnerID        = 16
	cvReferenceID    = 24
)

// Counter record states.
const (
	CounterUnused    int32 = 0
	CounterAllocated int32 = 1
	CounterReclaimed int32 = -1
)

// Counter type ids the driver uses (io.aeron.AeronCounters).
const (
	CounterTypeSystem            int32 = 0
	CounterTypePublisherLimit    int32 = 1
	CounterTypeSenderPosition    int32 = 2
	CounterTypeReceiverHWM       int32 = 3
	CounterTypeSubscriberPos     int32 = 4
	CounterTypeReceiverPosition  int32 = 5
	CounterTypeSendChannelStatus int32 = 6
	CounterTypeRecvChannelStatus int32 = 7
	CounterTypeSenderLimit       int32 = 9
	CounterTypeClientHeartbeat   int32 = 11
	CounterTypePublisherPosition int32 = 12
)

// CountersReader reads the driver's counters (metadata and values sections
// of cnc.dat). Every method may be called from any goroutine.
type CountersReader struct {
	meta   []byte
	values []byte
}

// CounterInfo is one allocated counter, as AeronStat lists it.
type CounterInfo struct {
	ID             int32
	TypeID         int32
	Value          int64
	RegistrationID int64
	OwnerID        int64
	ReferenceID    int64
	Key            []byte // copy
	Label          string
}

// MaxCounterID is the largest counter id the buffers hold.
func (r *CountersReader) MaxCounterID() int32 { return int32(len(r.values)/counterValueLength) - 1 }

func (r *CountersReader) valid(id int32) bool { return id >= 0 && id <= r.MaxCounterID() }

// State is the counter's state (CounterAllocated, ...). The driver stores
// it with release after filling the record; acquire here.
func (r *CountersReader) State(id int32) int32 {
	if !r.valid(id) {
		return CounterUnused
	}
	return shm.LoadInt32Acquire(r.meta, int(id)*counterMetadataLength+cmState)
}

// TypeID is the counter's type id.
func (r *CountersReader) TypeID(id int32) int32 {
	return shm.GetInt32(r.meta, int(id)*counterMetadataLength+cmTypeID)
}

// Value reads the counter value with acquire ordering (its writer stores
// with release). It does not allocate.
func (r *CountersReader) Value(id int32) int64 {
	return shm.LoadInt64Acquire(r.values, int(id)*counterValueLength)
}

// RegistrationID is the counter's registration id.
func (r *CountersReader) RegistrationID(id int32) int64 {
	return shm.LoadInt64Acquire(r.values, int(id)*counterValueLength+cvRegistrationID)
}

// OwnerID is the client id that owns the counter (−1 for system counters).
func (r *CountersReader) OwnerID(id int32) int64 {
	return shm.LoadInt64Acquire(r.values, int(id)*counterValueLength+cvOwnerID)
}

// Label is the counter's label.
func (r *CountersReader) Label(id int32) string {
	base := int(id) * counterMetadataLength
	n := int(shm.GetInt32(r.meta, base+cmLabelLength))
	n = max(0, min(n, counterMaxLabel))
	return string(r.meta[base+cmLabel : base+cmLabel+n])
}

// Key returns the counter's 112 key bytes (a view into shared memory).
func (r *CountersReader) Key(id int32) []byte {
	base := int(id)*counterMetadataLength + cmKey
	return r.meta[base : base+counterMaxKey : base+counterMaxKey]
}

// ForEach calls fn for every allocated counter, in id order, until fn
// returns false. Like AeronStat it stops at the first never-used record.
func (r *CountersReader) ForEach(fn func(CounterInfo) bool) {
	for id := int32(0); id <= r.MaxCounterID(); id++ {
		st := r.State(id)
		if st == CounterUnused {
			return
		}
		if st != CounterAllocated {
			continue
		}
		info := CounterInfo{
			ID:             id,
			TypeID:         r.TypeID(id),
			Value:          r.Value(id),
			RegistrationID: r.RegistrationID(id),
			OwnerID:        r.OwnerID(id),
			ReferenceID:    shm.LoadInt64Acquire(r.values, int(id)*counterValueLength+cvReferenceID),
			Key:            append([]byte(nil), r.Key(id)...),
			Label:          r.Label(id),
		}
		if !fn(info) {
			return
		}
	}
}

// FindByTypeAndRegistrationID returns the id of the allocated counter with
// the given type and registration id, or −1.
func (r *CountersReader) FindByTypeAndRegistrationID(typeID int32, registrationID int64) int32 {
	for id := int32(0); id <= r.MaxCounterID(); id++ {
		st := r.State(id)
		if st == CounterUnused {
			break
		}
		if st == CounterAllocated && r.TypeID(id) == typeID && r.RegistrationID(id) == registrationID {
			return id
		}
	}
	return -1
}

// Counter is a counter this client allocated with AddCounter, or wraps with
// Client.Counter. Get/Set/Add may be called from any goroutine.
type Counter struct {
	client         *Client
	values         []byte
	off            int
	id             int32
	registrationID int64
	closed         bool
}

// ID is the counter id.
func (c *Counter) ID() int32 { return c.id }

// RegistrationID is the id of the ADD_COUNTER command that created it.
func (c *Counter) RegistrationID() int64 { return c.registrationID }

// Get reads the value (acquire).
func (c *Counter) Get() int64 { return shm.LoadInt64Acquire(c.values, c.off) }

// Set stores the value (release): readers that see it see what this
// goroutine wrote before.
func (c *Counter) Set(v int64) { shm.StoreInt64Release(c.values, c.off, v) }

// Add adds delta atomically (full fence) and returns the previous value.
func (c *Counter) Add(delta int64) int64 { return shm.GetAndAddInt64(c.values, c.off, delta) }

// Close removes the counter from the driver (REMOVE_COUNTER).
func (c *Counter) Close() error {
	if c.client == nil {
		return nil
	}
	return c.client.releaseCounter(c)
}

const nullValue = -1
