package main

import (
	"bytes"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer a logger and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestGroupSignalCopyIsNotWarned: a stop sent to the process group (GNU
// timeout, a shell, a process manager) reaches the server twice within
// microseconds; the copy is no second request and must not log "WARN
// already shutting down", which a genuine second SIGTERM still does.
func TestGroupSignalCopyIsNotWarned(t *testing.T) {
	watch := func(began time.Time, sigs ...os.Signal) string {
		var out syncBuffer
		log := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
		ch := make(chan os.Signal, len(sigs))
		for _, s := range sigs {
			ch <- s
		}
		close(ch)
		watchSignals(ch, began, log)
		return out.String()
	}
	if log := watch(time.Now(), syscall.SIGTERM, syscall.SIGINT); strings.Contains(log, "level=WARN") ||
		strings.Contains(log, "level=ERROR") || !strings.Contains(log, "process group") {
		t.Errorf("the process group's copies right after the first signal:\n%s", log)
	}
	if log := watch(time.Now().Add(-time.Second), syscall.SIGTERM); !strings.Contains(log, "level=WARN msg=\"already shutting down") {
		t.Errorf("a second SIGTERM a second later:\n%s", log)
	}
}
