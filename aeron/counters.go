package aeron

import (
	"github.com/goblin-kv/goblin/aeron/internal/counters"
	"github.com/goblin-kv/goblin/internal/shm"
)

// Counter record states.
const (
	CounterUnused    = counters.StateUnused
	CounterAllocated = counters.StateAllocated
	CounterReclaimed = counters.StateReclaimed
)

// Counter type ids the driver uses (io.aeron.AeronCounters).
const (
	CounterTypeSystem            = counters.TypeSystem
	CounterTypePublisherLimit    = counters.TypePublisherLimit
	CounterTypeSenderPosition    = counters.TypeSenderPosition
	CounterTypeReceiverHWM       = counters.TypeReceiverHWM
	CounterTypeSubscriberPos     = counters.TypeSubscriberPosition
	CounterTypeReceiverPosition  = counters.TypeReceiverPosition
	CounterTypeSendChannelStatus = counters.TypeSendChannelStatus
	CounterTypeRecvChannelStatus = counters.TypeReceiveChannelStatus
	CounterTypeSenderLimit       = counters.TypeSenderLimit
	CounterTypeClientHeartbeat   = counters.TypeClientHeartbeat
	CounterTypePublisherPosition = counters.TypePublisherPosition
)

// CountersReader reads the driver's counters (metadata and values sections
// of cnc.dat). Every method may be called from any goroutine.
type CountersReader = counters.Reader

// CounterInfo is one allocated counter, as AeronStat lists it.
type CounterInfo = counters.Info

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
