package engine

import (
	"testing"
	"time"
)

// TestReplStreaming: a primary with an online replica reports its
// replication as streaming while the stream's offset moves and for 100 ms
// after, and at rest after that (the loop then spins before it parks, as
// a standalone server's does); a replica still syncing keeps it streaming;
// a server that replicates nothing never streams.
func TestReplStreaming(t *testing.T) {
	e, clock := newEngine(t, Options{})
	// The loop's Tick reads the clock into e.now; a fake replica has no
	// session for Tick's replication work, so the test does only that.
	tick := func(d time.Duration) {
		clock.Advance(d)
		e.now = clock.NowMillis()
	}
	e.Tick(1)
	if e.ReplStreaming() {
		t.Fatal("a server without replicas says its replication streams")
	}
	r := &replica{state: replOnline}
	e.repl.replicas = append(e.repl.replicas, r)
	e.repl.hist.Offset += 100 // a write fed to the stream
	if !e.ReplStreaming() {
		t.Fatal("the stream's offset moved: not streaming")
	}
	tick(50 * time.Millisecond)
	if !e.ReplStreaming() {
		t.Fatal("50 ms after the last write: not streaming, want streaming for 100 ms")
	}
	tick(60 * time.Millisecond)
	if e.ReplStreaming() {
		t.Fatal("110 ms after the last write: still streaming, want at rest")
	}
	e.repl.hist.Offset += 14 // a PING of the stream
	if !e.ReplStreaming() {
		t.Fatal("the offset moved again: not streaming")
	}
	tick(time.Second)
	if e.ReplStreaming() {
		t.Fatal("a second after the last write: still streaming")
	}
	r.state = replSendBulk
	if !e.ReplStreaming() {
		t.Fatal("a replica receiving its RDB: not streaming")
	}
}
