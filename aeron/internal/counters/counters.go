// Package counters is the counters section of an Aeron CnC file (Agrona's
// CountersReader and CountersManager): a 512-byte metadata record and a
// 128-byte value record per counter id. The media driver allocates and
// frees counters (Manager); clients and tools such as AeronStat read them
// (Reader). goblin's driver and client share this one layout.
package counters

import (
	"errors"
	"fmt"
	"math"

	"github.com/goblin-kv/goblin/internal/shm"
)

// Record layouts.
const (
	MetadataLength = 512 // bytes per counter in the metadata section
	ValueLength    = 128 // bytes per counter in the values section

	// Metadata record fields.
	StateOffset                = 0   // int32: StateUnused, StateAllocated, StateReclaimed
	TypeIDOffset               = 4   // int32
	FreeForReuseDeadlineOffset = 8   // int64 epoch ms; NotFreeToReuse while allocated
	KeyOffset                  = 16  // MaxKeyLength bytes
	LabelLengthOffset          = 128 // int32
	LabelOffset                = 132 // MaxLabelLength bytes of ASCII
	MaxKeyLength               = 112
	MaxLabelLength             = 380

	// Value record fields.
	ValueOffset          = 0  // int64
	RegistrationIDOffset = 8  // int64
	OwnerIDOffset        = 16 // int64: client id; −1 for system and static counters
	ReferenceIDOffset    = 24 // int64

	// NotFreeToReuse is the deadline of an allocated record.
	NotFreeToReuse = math.MaxInt64
)

// Record states.
const (
	StateUnused    int32 = 0
	StateAllocated int32 = 1
	StateReclaimed int32 = -1
)

// Counter type ids (io.aeron.AeronCounters).
const (
	TypeSystem               int32 = 0
	TypePublisherLimit       int32 = 1
	TypeSenderPosition       int32 = 2
	TypeReceiverHWM          int32 = 3
	TypeSubscriberPosition   int32 = 4
	TypeReceiverPosition     int32 = 5
	TypeSendChannelStatus    int32 = 6
	TypeReceiveChannelStatus int32 = 7
	TypeSenderLimit          int32 = 9
	TypePerImageTypeID       int32 = 10
	TypeClientHeartbeat      int32 = 11
	TypePublisherPosition    int32 = 12
	TypeSenderBPE            int32 = 13
	TypeLocalSocketAddress   int32 = 14
	TypeFlowControlReceivers int32 = 17
	TypeMDCDestinations      int32 = 18
	TypeSenderNaksReceived   int32 = 19
	TypeReceiverNaksSent     int32 = 20
)

// Reader reads counters. Every method may be called from any goroutine.
type Reader struct {
	meta   []byte
	values []byte
}

// NewReader reads the counters in the given metadata and values sections.
func NewReader(meta, values []byte) *Reader { return &Reader{meta: meta, values: values} }

// Info is one allocated counter, as AeronStat lists it.
type Info struct {
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
func (r *Reader) MaxCounterID() int32 { return int32(len(r.values)/ValueLength) - 1 }

func (r *Reader) valid(id int32) bool { return id >= 0 && id <= r.MaxCounterID() }

func metaOffset(id int32) int  { return int(id) * MetadataLength }
func valueOffset(id int32) int { return int(id) * ValueLength }

// ValueOffsetOf is where counter id's value lives in the values section.
func ValueOffsetOf(id int32) int { return valueOffset(id) }

// State is the counter's state (StateAllocated, ...). The driver stores it
// with release after filling the record; acquire here.
func (r *Reader) State(id int32) int32 {
	if !r.valid(id) {
		return StateUnused
	}
	return shm.LoadInt32Acquire(r.meta, metaOffset(id)+StateOffset)
}

// TypeID is the counter's type id.
func (r *Reader) TypeID(id int32) int32 { return shm.GetInt32(r.meta, metaOffset(id)+TypeIDOffset) }

// Value reads the counter value with acquire ordering (its writer stores
// with release). It does not allocate.
func (r *Reader) Value(id int32) int64 { return shm.LoadInt64Acquire(r.values, valueOffset(id)) }

// RegistrationID is the counter's registration id.
func (r *Reader) RegistrationID(id int32) int64 {
	return shm.LoadInt64Acquire(r.values, valueOffset(id)+RegistrationIDOffset)
}

// OwnerID is the client id that owns the counter (−1 for system counters).
func (r *Reader) OwnerID(id int32) int64 {
	return shm.LoadInt64Acquire(r.values, valueOffset(id)+OwnerIDOffset)
}

// ReferenceID is the counter's reference id (for a sub-pos, the image).
func (r *Reader) ReferenceID(id int32) int64 {
	return shm.LoadInt64Acquire(r.values, valueOffset(id)+ReferenceIDOffset)
}

// FreeForReuseDeadline is when a freed record may be reused (epoch ms).
func (r *Reader) FreeForReuseDeadline(id int32) int64 {
	return shm.GetInt64(r.meta, metaOffset(id)+FreeForReuseDeadlineOffset)
}

// Label is the counter's label. The driver stores the label length with
// release after the label bytes (and again when it appends); acquire here.
func (r *Reader) Label(id int32) string {
	base := metaOffset(id)
	n := int(shm.LoadInt32Acquire(r.meta, base+LabelLengthOffset))
	n = max(0, min(n, MaxLabelLength))
	return string(r.meta[base+LabelOffset : base+LabelOffset+n])
}

// Key returns the counter's MaxKeyLength key bytes (a view into shared
// memory).
func (r *Reader) Key(id int32) []byte {
	base := metaOffset(id) + KeyOffset
	return r.meta[base : base+MaxKeyLength : base+MaxKeyLength]
}

// ForEach calls fn for every allocated counter, in id order, until fn
// returns false. Like AeronStat it stops at the first never-used record.
func (r *Reader) ForEach(fn func(Info) bool) {
	for id := int32(0); id <= r.MaxCounterID(); id++ {
		st := r.State(id)
		if st == StateUnused {
			return
		}
		if st != StateAllocated {
			continue
		}
		info := Info{
			ID:             id,
			TypeID:         r.TypeID(id),
			Value:          r.Value(id),
			RegistrationID: r.RegistrationID(id),
			OwnerID:        r.OwnerID(id),
			ReferenceID:    r.ReferenceID(id),
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
func (r *Reader) FindByTypeAndRegistrationID(typeID int32, registrationID int64) int32 {
	for id := int32(0); id <= r.MaxCounterID(); id++ {
		st := r.State(id)
		if st == StateUnused {
			break
		}
		if st == StateAllocated && r.TypeID(id) == typeID && r.RegistrationID(id) == registrationID {
			return id
		}
	}
	return -1
}

// ErrFull reports that every counter id is allocated (or freed too
// recently to reuse).
var ErrFull = errors.New("unable to allocate counter, buffer is full")

// Manager allocates and frees counters: the media driver's conductor owns
// it, and only that goroutine may call its methods. It reads like a Reader.
type Manager struct {
	Reader
	freeToReuseMs int64
	highWaterMark int32   // highest id ever allocated, −1 at first
	freeList      []int32 // freed ids, oldest first
}

// NewManager manages the counters in the given (zeroed) sections. A freed
// id is reused only freeToReuseMs milliseconds after it was freed, so a
// client that still reads it sees a reclaimed record, not someone else's.
func NewManager(meta, values []byte, freeToReuseMs int64) *Manager {
	return &Manager{Reader: Reader{meta: meta, values: values}, freeToReuseMs: freeToReuseMs,
		highWaterMark: -1, freeList: make([]int32, 0, 64)}
}

// Allocate takes a counter id, fills its metadata (type, key, label; the
// key and label are truncated to their maximum lengths) and then marks it
// allocated. Its value, registration, owner and reference ids are 0: set
// them before telling anyone the id. nowMs is the epoch clock.
func (m *Manager) Allocate(typeID int32, key, label []byte, nowMs int64) (int32, error) {
	id, err := m.nextID(nowMs)
	if err != nil {
		return -1, err
	}
	base := metaOffset(id)
	shm.PutInt32(m.meta, base+TypeIDOffset, typeID)
	shm.PutInt64(m.meta, base+FreeForReuseDeadlineOffset, NotFreeToReuse)
	k := m.meta[base+KeyOffset : base+KeyOffset+MaxKeyLength]
	clear(k[copy(k, key):])
	n := copy(m.meta[base+LabelOffset:base+LabelOffset+MaxLabelLength], label)
	shm.StoreInt32Release(m.meta, base+LabelLengthOffset, int32(n))
	// State last, with release: a reader that acquires StateAllocated sees
	// the whole record.
	shm.StoreInt32Release(m.meta, base+StateOffset, StateAllocated)
	return id, nil
}

func (m *Manager) nextID(nowMs int64) (int32, error) {
	for i, id := range m.freeList {
		if nowMs >= m.FreeForReuseDeadline(id) {
			m.freeList = append(m.freeList[:i], m.freeList[i+1:]...)
			off := valueOffset(id)
			// A reused record starts from scratch; the value last (release).
			shm.StoreInt64Release(m.values, off+RegistrationIDOffset, 0)
			shm.StoreInt64Release(m.values, off+OwnerIDOffset, 0)
			shm.StoreInt64Release(m.values, off+ReferenceIDOffset, 0)
			shm.StoreInt64Release(m.values, off+ValueOffset, 0)
			return id, nil
		}
	}
	if m.highWaterMark+1 > m.MaxCounterID() {
		return -1, fmt.Errorf("%w: maxCounterId=%d", ErrFull, m.MaxCounterID())
	}
	m.highWaterMark++
	return m.highWaterMark, nil
}

// Free reclaims counter id: readers see StateReclaimed at once, and the id
// is reused no sooner than the free-to-reuse timeout after nowMs.
func (m *Manager) Free(id int32, nowMs int64) error {
	if !m.valid(id) || m.State(id) != StateAllocated {
		return fmt.Errorf("counter not allocated: id=%d", id)
	}
	base := metaOffset(id)
	shm.StoreInt32Release(m.meta, base+StateOffset, StateReclaimed)
	clear(m.meta[base+KeyOffset : base+KeyOffset+MaxKeyLength])
	shm.PutInt64(m.meta, base+FreeForReuseDeadlineOffset, nowMs+m.freeToReuseMs)
	m.freeList = append(m.freeList, id)
	return nil
}

// SetValue stores the value (release): readers that acquire it see what
// the conductor wrote before.
func (m *Manager) SetValue(id int32, v int64) { shm.StoreInt64Release(m.values, valueOffset(id), v) }

// AddValue adds delta to the value (full fence) for counters other
// processes also add to; the conductor's own counters could use SetValue.
func (m *Manager) AddValue(id int32, delta int64) {
	shm.GetAndAddInt64(m.values, valueOffset(id), delta)
}

// SetRegistrationID stores the registration id (release).
func (m *Manager) SetRegistrationID(id int32, v int64) {
	shm.StoreInt64Release(m.values, valueOffset(id)+RegistrationIDOffset, v)
}

// SetOwnerID stores the owner (client) id (release).
func (m *Manager) SetOwnerID(id int32, v int64) {
	shm.StoreInt64Release(m.values, valueOffset(id)+OwnerIDOffset, v)
}

// SetReferenceID stores the reference id (release).
func (m *Manager) SetReferenceID(id int32, v int64) {
	shm.StoreInt64Release(m.values, valueOffset(id)+ReferenceIDOffset, v)
}

// AppendLabel appends suffix to the label, truncated at MaxLabelLength.
func (m *Manager) AppendLabel(id int32, suffix []byte) {
	base := metaOffset(id)
	n := int(shm.GetInt32(m.meta, base+LabelLengthOffset)) // the conductor is the only writer
	k := copy(m.meta[base+LabelOffset+n:base+LabelOffset+MaxLabelLength], suffix)
	shm.StoreInt32Release(m.meta, base+LabelLengthOffset, int32(n+k))
}

// SetLabel replaces the label, truncated at MaxLabelLength
// (AtomicCounter.updateLabel). The conductor is the only writer; readers
// load the length with acquire after the bytes were written.
func (m *Manager) SetLabel(id int32, label []byte) {
	base := metaOffset(id)
	k := copy(m.meta[base+LabelOffset:base+LabelOffset+MaxLabelLength], label)
	shm.StoreInt32Release(m.meta, base+LabelLengthOffset, int32(k))
}

// Values is the values section (for position counters the conductor
// reads and writes directly).
func (m *Manager) Values() []byte { return m.values }
