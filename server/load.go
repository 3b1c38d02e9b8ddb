package server

import (
	"errors"
	"fmt"
	"time"

	"github.com/goblin-kv/goblin/engine"
	"github.com/goblin-kv/goblin/snapshot"
)

// beginLoad starts loading the snapshot file, if there is one, as Redis
// 7.0 does: the listeners are already open; the first LoadStepBytes of the
// file are loaded here, before the loop's first cycle (a small file is
// loaded whole, and its clients wait in the listeners' backlog rather
// than see LOADING); the loop loads the rest a step per cycle and answers
// LOADING meanwhile (engine/loadstart.go). A file that cannot be loaded
// whole stops the start (here) or the server (Run returns the reason).
func (s *Server) beginLoad() error {
	s.loadDone = make(chan struct{})
	path := s.engine.RDBPath()
	start := time.Now()
	found, err := s.engine.BeginLoad(snapshot.LoadOptions{
		SkipUnsupported: s.opts.SkipUnsupported,
		Progress: func(p snapshot.LoadStats) {
			s.log.Info("loading", "path", path, "keys", p.Keys, "bytes", p.Bytes, "of", p.Size,
				"percent", fmt.Sprintf("%.1f", 100*float64(p.Bytes)/float64(max(p.Size, 1))))
		},
	}, func(st snapshot.LoadStats, err error) { // on the loop, or in beginLoad for a small file
		s.loadingNow.Store(false)
		if errors.Is(err, engine.ErrLoadGivenUp) {
			s.log.Warn("loading given up", "path", path, "keys", st.Keys, "reason", err)
			close(s.loadDone)
			return
		}
		if err != nil {
			s.loadErr = fmt.Errorf("server: cannot load %s, refusing to start with part of it (move the file away to start empty): %w", path, err)
			if s.ran.Load() { // on the loop: Run returns loadErr; New returns it itself
				s.log.Error("loading failed: stopping", "err", s.loadErr)
				s.loop.Stop()
			}
			return
		}
		args := []any{"path", path, "keys", st.Keys, "expired_dropped", st.Expired, "bytes", st.Bytes,
			"rdb_version", st.Version, "duration", time.Since(start)}
		if st.Skipped > 0 {
			args = append(args, "skipped_unsupported", st.Skipped)
		}
		s.log.Info("DB loaded from disk", args...)
		close(s.loadDone)
	})
	if err != nil {
		return fmt.Errorf("server: cannot load %s: %w", path, err)
	}
	if !found {
		close(s.loadDone)
		s.log.Info("no snapshot to load", "path", path)
		return nil
	}
	s.loadingNow.Store(true)
	if s.engine.StepLoad(snapshot.StepLimit{Bytes: engine.LoadStepBytes}) {
		return s.loadErr
	}
	s.log.Info("loading the snapshot file while serving: clients get LOADING until it is loaded", "path", path)
	return nil
}

// LoadDone is closed when the snapshot file has been loaded at start (at
// once without a file): the server serves its data from then on. It is
// never closed if the load fails (Run then returns the reason).
func (s *Server) LoadDone() <-chan struct{} { return s.loadDone }
