package member

import (
	"log/slog"
	"os"
	"path/filepath"
	"sync"
)

// confWriter writes nodes.conf. A write that must be durable before the
// loop goes on (writeNow: new epochs, a vote) is made on the loop, with
// an fsync; any other (writeLater: a slot's owner, a flag) is handed to
// a goroutine of its own, so the loop does not wait for the file system:
// creating and renaming the file took about a millisecond on a loaded
// machine, on every SETSLOT NODE of a reshard and every gossiped change.
// Writes land in the order they were asked for, the newest content
// replacing a later write not yet started.
type confWriter struct {
	path string
	log  *slog.Logger

	// writing is held by whoever is writing the file: the goroutine
	// around one write, the loop around writeNow; so a writeNow waits
	// for a write in progress and the goroutine's next write waits for
	// writeNow.
	writing sync.Mutex

	mu     sync.Mutex    // guards next and closed, between the loop and the goroutine
	next   []byte        // newest content for the goroutine; nil: none
	closed bool          // close was called: no more writes for the goroutine
	wake   chan struct{} // capacity 1: next was set, or closed
	done   chan struct{} // closed when the goroutine has returned
}

func newConfWriter(path string, log *slog.Logger) *confWriter {
	w := &confWriter{path: path, log: log, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go w.run()
	return w
}

func (w *confWriter) run() {
	defer close(w.done)
	for range w.wake {
		w.writing.Lock()
		w.mu.Lock()
		b, closed := w.next, w.closed
		w.next = nil
		w.mu.Unlock()
		if b != nil {
			if err := writeConf(w.path, b, false); err != nil {
				w.log.Error("cluster: nodes.conf not saved", "file", w.path, "err", err)
			}
		}
		w.writing.Unlock()
		if closed {
			return
		}
	}
}

// writeLater hands b to the goroutine; b must not be changed afterwards.
func (w *confWriter) writeLater(b []byte) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		_ = w.writeNow(b, false)
		return
	}
	w.next = b
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default: // the goroutine is already due to look at next
	}
}

// writeNow writes b before it returns, fsynced if sync, dropping any
// older content the goroutine has not started writing.
func (w *confWriter) writeNow(b []byte, sync bool) error {
	w.writing.Lock()
	defer w.writing.Unlock()
	w.mu.Lock()
	w.next = nil
	w.mu.Unlock()
	return writeConf(w.path, b, sync)
}

// close writes what is pending and stops the goroutine; later writes are
// made at once.
func (w *confWriter) close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	<-w.done
}

// writeConf replaces the file at path with b atomically (a temporary file
// in the same directory, renamed over it), fsyncing it first if sync.
func writeConf(path string, b []byte, sync bool) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".nodes-*.conf")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(b)
	if werr == nil && sync {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
	}
	return werr
}
