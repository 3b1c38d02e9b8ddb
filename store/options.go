package store

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Hard limits of the slot layout. Options may lower them, never raise them.
const (
	// HardMaxKeyLen is the longest key: Redis's 512 MiB less room for the
	// rest of the key's arena block, so a longest key with a longest value
	// still fits arena.MaxBlock.
	HardMaxKeyLen = 512<<20 - 64
	// HardMaxValueLen is the longest value the slot layout can describe: the encoded
	// length (tag byte + bytes) has 29 bits, the same 512 MiB ceiling as Redis' bulk strings.
	HardMaxValueLen = 1<<29 - 2
)

// Defaults applied by Options.EnsureDefaults.
const (
	DefaultMaxKeyLen   = DefaultMaxValueLen
	DefaultMaxValueLen = 16 << 20
)

// EvictionPolicy says what a write does when MaxMemory would be exceeded.
type EvictionPolicy uint8

const (
	// NoEviction fails the write with ErrOOM; nothing already stored is touched.
	NoEviction EvictionPolicy = iota
	// AllKeysLRU evicts approximately least-recently-used keys (CLOCK with 2-bit counters).
	AllKeysLRU
	// VolatileTTL evicts, among a bounded sample of keys that have a TTL, the one that
	// expires soonest; with no such key in the sample the write fails with ErrOOM.
	VolatileTTL
	// AllKeysLFU evicts, among a bounded sample of keys, the least frequently used:
	// the lowest of Redis's logarithmic access counters (lfu.go).
	AllKeysLFU
	// VolatileLFU is AllKeysLFU among keys that have a TTL; with no such key in the
	// sample the write fails with ErrOOM.
	VolatileLFU
	// VolatileLRU is AllKeysLRU among keys that have a TTL; with none the write fails
	// with ErrOOM.
	VolatileLRU
	// AllKeysRandom evicts a key chosen at random.
	AllKeysRandom
	// VolatileRandom evicts a key with a TTL chosen at random; with none the write
	// fails with ErrOOM.
	VolatileRandom

	lastPolicy = VolatileRandom
)

// String returns the Redis spelling of the policy.
func (p EvictionPolicy) String() string {
	switch p {
	case NoEviction:
		return "noeviction"
	case AllKeysLRU:
		return "allkeys-lru"
	case VolatileTTL:
		return "volatile-ttl"
	case AllKeysLFU:
		return "allkeys-lfu"
	case VolatileLFU:
		return "volatile-lfu"
	case VolatileLRU:
		return "volatile-lru"
	case AllKeysRandom:
		return "allkeys-random"
	case VolatileRandom:
		return "volatile-random"
	}
	return fmt.Sprintf("EvictionPolicy(%d)", uint8(p))
}

// ParseEvictionPolicy accepts Redis's eight spellings: noeviction, allkeys-lru,
// volatile-ttl, allkeys-lfu, volatile-lfu, volatile-lru, allkeys-random and
// volatile-random.
func ParseEvictionPolicy(s string) (EvictionPolicy, error) {
	switch s {
	case "noeviction", "":
		return NoEviction, nil
	case "allkeys-lru":
		return AllKeysLRU, nil
	case "volatile-ttl":
		return VolatileTTL, nil
	case "allkeys-lfu":
		return AllKeysLFU, nil
	case "volatile-lfu":
		return VolatileLFU, nil
	case "volatile-lru":
		return VolatileLRU, nil
	case "allkeys-random":
		return AllKeysRandom, nil
	case "volatile-random":
		return VolatileRandom, nil
	}
	return 0, fmt.Errorf("%w: %q (want noeviction, allkeys-lru, volatile-lru, allkeys-lfu, volatile-lfu, allkeys-random, volatile-random or volatile-ttl)", ErrBadOption, s)
}

// Clock gives the store its notion of now, in Unix milliseconds.
type Clock interface{ NowMillis() int64 }

// SystemClock reads the wall clock.
type SystemClock struct{}

// NowMillis returns time.Now in Unix milliseconds.
func (SystemClock) NowMillis() int64 { return time.Now().UnixMilli() }

// FakeClock is a manually advanced clock for tests. It is safe to read and advance
// from different goroutines (the value is an atomic).
type FakeClock struct{ ms atomic.Int64 }

// NewFakeClock returns a FakeClock reading unixMillis.
func NewFakeClock(unixMillis int64) *FakeClock {
	c := &FakeClock{}
	c.ms.Store(unixMillis)
	return c
}

// NowMillis returns the clock's current reading.
func (c *FakeClock) NowMillis() int64 { return c.ms.Load() }

// Set moves the clock to unixMillis.
func (c *FakeClock) Set(unixMillis int64) { c.ms.Store(unixMillis) }

// Advance moves the clock forward by d (truncated to milliseconds).
func (c *FakeClock) Advance(d time.Duration) { c.ms.Add(d.Milliseconds()) }

// Options configure a Store. The zero value works: no memory cap, default limits,
// the system clock.
type Options struct {
	// MaxMemory caps the bytes of index, slots and live arena blocks the store may
	// hold; 0 means no cap. See docs/store.md for what is counted.
	MaxMemory int64
	// Eviction is the policy applied when MaxMemory would be exceeded.
	Eviction EvictionPolicy
	// MaxKeyLen is the longest key accepted (default DefaultMaxKeyLen, at most HardMaxKeyLen).
	MaxKeyLen int
	// MaxValueLen is the longest value accepted (default DefaultMaxValueLen, at most HardMaxValueLen).
	MaxValueLen int
	// Clock is the time source for expiry (default SystemClock).
	Clock Clock
	// InitialCapacity pre-sizes the index for this many keys (optional).
	InitialCapacity int
	// ArenaChunkSize is the size of the arena's chunks in bytes (default 1 MiB; a power
	// of two between 256 KiB and 16 MiB).
	ArenaChunkSize int
	// Limits are the collection encodings' conversion thresholds (the zero
	// value: Redis 7.0's defaults).
	Limits Limits
}

// Limits are Redis's thresholds for converting a collection from its compact
// encoding to its large one, named as the parameters of the same names.
type Limits struct {
	HashMaxListpackEntries int // hash-max-listpack-entries (default 512)
	HashMaxListpackValue   int // hash-max-listpack-value (default 64)
	SetMaxIntsetEntries    int // set-max-intset-entries (default 512)
	ListMaxListpackSize    int // list-max-listpack-size (default -2: 8 KiB nodes)
	ZSetMaxListpackEntries int // zset-max-listpack-entries (default 128)
	ZSetMaxListpackValue   int // zset-max-listpack-value (default 64)
}

// DefaultLimits are Redis 7.0's defaults.
var DefaultLimits = Limits{HashMaxListpackEntries: 512, HashMaxListpackValue: 64, SetMaxIntsetEntries: 512, ListMaxListpackSize: -2,
	ZSetMaxListpackEntries: 128, ZSetMaxListpackValue: 64}

// EnsureDefaults fills zero fields with their defaults and returns the result.
func (o Options) EnsureDefaults() Options {
	if o.MaxKeyLen == 0 {
		o.MaxKeyLen = DefaultMaxKeyLen
	}
	if o.MaxValueLen == 0 {
		o.MaxValueLen = DefaultMaxValueLen
	}
	if o.Clock == nil {
		o.Clock = SystemClock{}
	}
	if o.Limits == (Limits{}) {
		o.Limits = DefaultLimits
	}
	return o
}

// Validate reports the first option out of range, wrapping ErrBadOption.
func (o Options) Validate() error {
	switch {
	case o.MaxMemory < 0:
		return fmt.Errorf("%w: MaxMemory %d is negative", ErrBadOption, o.MaxMemory)
	case o.Eviction > lastPolicy:
		return fmt.Errorf("%w: unknown eviction policy %d", ErrBadOption, o.Eviction)
	case o.MaxKeyLen < 1 || o.MaxKeyLen > HardMaxKeyLen:
		return fmt.Errorf("%w: MaxKeyLen %d not in [1, %d]", ErrBadOption, o.MaxKeyLen, HardMaxKeyLen)
	case o.MaxValueLen < 1 || o.MaxValueLen > HardMaxValueLen:
		return fmt.Errorf("%w: MaxValueLen %d not in [1, %d]", ErrBadOption, o.MaxValueLen, HardMaxValueLen)
	case o.InitialCapacity < 0:
		return fmt.Errorf("%w: InitialCapacity %d is negative", ErrBadOption, o.InitialCapacity)
	case o.ArenaChunkSize != 0 && (o.ArenaChunkSize < 256<<10 || o.ArenaChunkSize > 16<<20 || o.ArenaChunkSize&(o.ArenaChunkSize-1) != 0):
		return fmt.Errorf("%w: ArenaChunkSize %d is not a power of two in [256 KiB, 16 MiB]", ErrBadOption, o.ArenaChunkSize)
	}
	return nil
}

// SetOptions are the modifiers of SET.
type SetOptions struct {
	NX      bool // only set when the key does not exist
	XX      bool // only set when the key exists
	KeepTTL bool // keep the existing key's expiry (ignored when ExpireAt != 0)
	Get     bool // return the old value (appended to dst)
	// ExpireAt is the absolute expiry in Unix milliseconds; 0 means none. A time not
	// after now stores nothing and deletes the key (Redis' behaviour for PXAT in the past).
	ExpireAt int64
	// Kind says how the value is kept, which is what OBJECT ENCODING reports.
	Kind ValueKind
}

// ValueKind says how a write keeps its value.
type ValueKind uint8

const (
	// AsSet keeps a canonical decimal integer as an integer and anything
	// else as a string, as Redis's SET does (encodings int, embstr, raw).
	AsSet ValueKind = iota
	// AsString keeps the bytes as a string even when they spell an
	// integer, as Redis does for INCRBYFLOAT's result.
	AsString
	// AsBuilt keeps the bytes as a string built in place, as Redis does
	// for APPEND, SETRANGE, SETBIT, BITOP and BITFIELD (encoding raw).
	AsBuilt
)

// Stats is a snapshot of the store's counters; Store.Stats fills a caller-owned value.
type Stats struct {
	Keys        int64 // keys present (expired-but-not-yet-reclaimed keys included)
	KeysWithTTL int64 // of which have an expiry
	Hits        int64 // Get/Exists... that found a live key
	Misses      int64 // lookups that found nothing
	Expired     int64 // keys removed because their TTL passed (lazy + active)
	Evicted     int64 // keys removed by the eviction policy
	OOMRejects  int64 // writes refused with ErrOOM

	UsedMemory int64 // bytes counted against MaxMemory
	MaxMemory  int64

	IndexBuckets  int64 // buckets in the index (both tables while resizing)
	IndexResizing bool  // an incremental resize is in progress
	SlotBytes     int64 // bytes of slot pages

	ArenaSize       int64 // bytes of all arena chunks
	ArenaMapped     int64 // bytes of ArenaSize mapped outside the Go heap (the runtime does not count them)
	ArenaLive       int64 // bytes in allocated blocks
	ArenaDead       int64 // bytes in freed blocks awaiting reuse or compaction
	ArenaFree       int64 // bytes never handed out or in empty pages
	ArenaMoves      int64 // blocks moved by incremental compaction
	ArenaPagesFreed int64 // pages emptied by compaction and returned to the pool
}

// Errors returned by the store. Callers test them with errors.Is.
var (
	// ErrOOM: the write would exceed MaxMemory and the eviction policy could not make room.
	ErrOOM = errors.New("store: out of memory")
	// ErrKeyTooLong: the key is longer than Options.MaxKeyLen.
	ErrKeyTooLong = errors.New("store: key too long")
	// ErrValueTooLong: the value is longer than Options.MaxValueLen.
	ErrValueTooLong = errors.New("store: value too long")
	// ErrNotInteger: INCR-family command on a value that is not a base-10 64-bit integer.
	ErrNotInteger = errors.New("store: value is not an integer or out of range")
	// ErrOverflow: the increment would overflow a signed 64-bit integer.
	ErrOverflow = errors.New("store: increment or decrement would overflow")
	// ErrWrongType is declared in coll.go.

	// ErrBadOption: Options out of range.
	ErrBadOption = errors.New("store: bad option")
)
