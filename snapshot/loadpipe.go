package snapshot

import (
	"io"
	"strconv"

	"github.com/goblin-kv/goblin/rdb"
)

// The load's pipeline: a decoding goroutine reads the file with an
// rdb.Decoder and copies each entry into a batch; the goroutine that called
// Load takes full batches and inserts their keys. Batches go round between
// the two through two channels (free → decoder → full → loader → free), so
// a load allocates a few batches up front and nothing per key, and the
// decoder runs at most loadBatches batches ahead of the stores.
//
// Only the loading goroutine touches the stores: the decoder's RESIZEDB
// callback becomes a batch item the loader acts on in order.

const (
	loadBatches    = 4       // batches going round
	batchItems     = 4096    // entries a batch takes before it is handed over
	batchBytes     = 1 << 20 // bytes of keys and values a batch takes before it is handed over
	batchKeepBytes = 4 << 20 // a batch's byte buffer grown past this (a large value) is dropped once used
	loadAhead      = 16      // string keys the loader hashes ahead of the one it stores (store.LoadHash)
)

// decoded is the decoder's state after a batch's last entry.
type decoded struct {
	stats   rdb.Stats
	version int
	usedMem int64 // the file's used-mem AUX field, 0 before it or without one
	final   bool  // the last batch: the file ended or the decoder failed
	err     error // set on the last batch: the decoder's error, nil at a clean end
}

// loadItem is one entry of a batch (or, with resize, one RESIZEDB hint).
// Its bytes are in the batch's buf from start: the key, then the string
// value (Str), then the collection's items, whose ends are ends[item:
// item+nItems]; scores are scores[score:score+nScores].
type loadItem struct {
	resize         bool
	hashed         bool // the loader has hash (store.LoadHash) for the key in its database
	large          bool
	typ            byte
	kind           rdb.Kind
	db             int
	keys           uint64 // resize: the hint
	exp            int64
	idle           int64 // LRU idle seconds, -1 for none
	freq           int   // LFU counter, -1 for none
	hash           uint64
	off            int64 // bytes of the file read after this entry, for messages
	start          int
	keyLen, strLen int
	item, nItems   int
	score, nScores int
}

// loadBatch is a run of decoded entries, copied out of the decoder.
type loadBatch struct {
	items  []loadItem
	buf    []byte
	ends   []int
	scores []float64
	its    [][]byte // the loader's reusable Items for entry
	decoded
}

func (b *loadBatch) reset() {
	b.items, b.ends, b.scores = b.items[:0], b.ends[:0], b.scores[:0]
	if cap(b.buf) > batchKeepBytes {
		b.buf = nil
	}
	b.buf = b.buf[:0]
}

func (b *loadBatch) key(it *loadItem) []byte {
	return b.buf[it.start : it.start+it.keyLen : it.start+it.keyLen]
}

func (b *loadBatch) str(it *loadItem) []byte {
	from := it.start + it.keyLen
	return b.buf[from : from+it.strLen : from+it.strLen]
}

// add copies e into the batch.
func (b *loadBatch) add(e *rdb.Entry, off int64) {
	it := loadItem{typ: e.Type, kind: e.Kind, large: e.Large, db: e.DB, exp: e.Expiry, idle: e.Idle, freq: e.Freq, off: off,
		start: len(b.buf), keyLen: len(e.Key), strLen: len(e.Str), item: len(b.ends), nItems: len(e.Items),
		score: len(b.scores), nScores: len(e.Scores)}
	b.buf = append(append(b.buf, e.Key...), e.Str...)
	for _, x := range e.Items {
		b.buf = append(b.buf, x...)
		b.ends = append(b.ends, len(b.buf))
	}
	b.scores = append(b.scores, e.Scores...)
	b.items = append(b.items, it)
}

// entry rebuilds item it as an rdb.Entry in e, its slices pointing into
// the batch (valid until the batch goes back to the decoder).
func (b *loadBatch) entry(it *loadItem, e *rdb.Entry) {
	b.its = b.its[:0]
	from := it.start + it.keyLen + it.strLen
	for _, end := range b.ends[it.item : it.item+it.nItems] {
		b.its = append(b.its, b.buf[from:end:end])
		from = end
	}
	*e = rdb.Entry{DB: it.db, Key: b.key(it), Expiry: it.exp, Type: it.typ,
		Value: rdb.Value{Kind: it.kind, Str: b.str(it), Items: b.its, Scores: b.scores[it.score : it.score+it.nScores], Large: it.large}}
}

// loadPipe is the decoding goroutine and its channels.
type loadPipe struct {
	free, full chan *loadBatch
	quit       chan struct{} // closed by the loader when it stops early
	exited     chan struct{} // closed by the decoder when it no longer reads
}

// startDecoding starts decoding r on a goroutine of its own.
func startDecoding(r io.Reader, o LoadOptions) *loadPipe {
	p := &loadPipe{free: make(chan *loadBatch, loadBatches), full: make(chan *loadBatch, loadBatches),
		quit: make(chan struct{}), exited: make(chan struct{})}
	for range loadBatches {
		p.free <- &loadBatch{items: make([]loadItem, 0, batchItems), buf: make([]byte, 0, batchBytes)}
	}
	go p.decode(r, o)
	return p
}

// stop ends the decoder early (when the loader returns before the end) and
// waits until it no longer reads r.
func (p *loadPipe) stop() {
	close(p.quit)
	<-p.exited
}

// decode fills batches until the file ends or the loader quits; the last
// batch carries the decoder's error.
func (p *loadPipe) decode(r io.Reader, o LoadOptions) {
	defer close(p.exited)
	defer close(p.full)
	var b *loadBatch
	var d *rdb.Decoder
	var usedMem int64
	d = rdb.NewDecoder(r, rdb.DecoderOptions{
		OnAux: func(key, value []byte) {
			if string(key) == "used-mem" {
				usedMem, _ = strconv.ParseInt(string(value), 10, 64)
			}
		},
		SkipUnsupported: o.SkipUnsupported,
		DropExpired:     true,
		Now:             o.Now,
		OnResizeDB: func(i int, keys, _ uint64) {
			b.items = append(b.items, loadItem{resize: true, db: i, keys: keys, off: d.Stats().Bytes})
		},
	})
	for {
		select {
		case b = <-p.free:
		case <-p.quit:
			return
		}
		b.reset()
		more := true
		for len(b.items) < batchItems && len(b.buf) < batchBytes {
			if more = d.Next(); !more {
				break
			}
			b.add(d.Entry(), d.Stats().Bytes)
		}
		b.decoded = decoded{stats: d.Stats(), version: d.Version(), usedMem: usedMem}
		if !more {
			b.final, b.err = true, d.Err()
		}
		select {
		case p.full <- b:
		case <-p.quit:
			return
		}
		if !more {
			return
		}
	}
}
