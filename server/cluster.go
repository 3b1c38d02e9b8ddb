package server

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/goblin-kv/goblin/cluster"
	"github.com/goblin-kv/goblin/engine"
)

// clusterOptions loads Options.ClusterConfig, when set, into the engine's
// cluster mode: reload reads the same file again, save writes the slot map
// back to it (atomically, by rename), and reloads asked for by SIGHUP are
// logged.
func (s *Server) clusterOptions() (engine.ClusterOptions, error) {
	path, node := s.opts.ClusterConfig, s.opts.ClusterNode
	if path == "" {
		if node != "" {
			return engine.ClusterOptions{}, fmt.Errorf("%w: --cluster-node needs --cluster-config", ErrOptions)
		}
		return engine.ClusterOptions{}, nil
	}
	cfg, err := cluster.Load(path, node)
	if err != nil {
		return engine.ClusterOptions{}, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	st, err := cluster.New(cfg)
	if err != nil {
		return engine.ClusterOptions{}, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	s.log.Info("cluster mode", "config", path, "node", cfg.Myself, "epoch", cfg.Epoch, "nodes", len(cfg.Nodes))
	return engine.ClusterOptions{
		State:  st,
		Reload: func() (*cluster.Config, error) { return cluster.Load(path, node) },
		Save: func(c *cluster.Config) error {
			if node != "" {
				c.Myself = "" // the file is shared; --cluster-node names this node
			}
			// The file's comments, blank lines and order stay.
			data := c.Format()
			if old, err := os.ReadFile(path); err == nil {
				data = c.Rewrite(old)
			}
			tmp, err := os.CreateTemp(filepath.Dir(path), ".cluster-*.conf")
			if err != nil {
				return err
			}
			_, werr := tmp.Write(data)
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
		},
		Reloaded: func(epoch uint64, err error) {
			if err != nil {
				s.log.Error("cluster configuration not reloaded", "config", path, "err", err)
				return
			}
			s.log.Info("cluster configuration reloaded", "config", path, "epoch", epoch)
		},
	}, nil
}

// ReloadCluster asks the loop to read the cluster configuration file again
// (SIGHUP); the outcome is logged. Any goroutine may call it.
func (s *Server) ReloadCluster() { s.engine.RequestClusterReload() }
