package server

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/goblin-kv/goblin/cluster"
	"github.com/goblin-kv/goblin/cluster/member"
	"github.com/goblin-kv/goblin/engine"
	"github.com/goblin-kv/goblin/transport"
)

// clusterOptions loads Options.ClusterConfig, when set, into the engine's
// cluster mode: reload reads the same file again, save writes the slot map
// back to it (atomically, by rename), and reloads asked for by SIGHUP are
// logged.
func (s *Server) clusterOptions() (engine.ClusterOptions, error) {
	path, node := s.opts.ClusterConfig, s.opts.ClusterNode
	if s.opts.ClusterEnabled {
		if path != "" || node != "" {
			return engine.ClusterOptions{}, fmt.Errorf("%w: --cluster-config/--cluster-node (goblin's static membership file) and --cluster-enabled (the Redis cluster bus, nodes.conf) exclude each other", ErrOptions)
		}
		return engine.ClusterOptions{State: cluster.NewEmpty(), AllowReadsWhenDown: s.opts.ClusterAllowReadsWhenDown,
			NoPubsubShardWhenDown: s.opts.ClusterNoPubsubShardWhenDown}, nil
	}
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

// setupClusterBus starts the cluster bus (--cluster-enabled) once the
// listeners are up: it announces the RESP TCP port and is polled by the
// loop like a transport.
func (s *Server) setupClusterBus() error {
	if !s.opts.ClusterEnabled {
		return nil
	}
	if err := s.reloadBusTLS(); err != nil {
		return fmt.Errorf("%w: tls-cluster: %w", ErrOptions, err)
	}
	port, err := strconv.Atoi(s.tcpPort())
	if err != nil {
		return fmt.Errorf("%w: --cluster-enabled needs a tcp:// listener (its port is the node's client port)", ErrOptions)
	}
	file := s.opts.ClusterConfigFile
	if file == "" {
		file = "nodes.conf"
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(s.opts.Dir, file)
	}
	host := ""
	for _, t := range s.targets {
		if t.Scheme == transport.TCP {
			host, _, _ = net.SplitHostPort(t.Address)
			break
		}
	}
	full := !s.opts.ClusterPartialCoverage
	m, err := member.New(member.Options{
		Port: port, BusPort: s.opts.ClusterPort, BindHost: host, ConfigFile: file,
		NodeTimeout: s.opts.ClusterNodeTimeout, AnnounceIP: s.opts.ClusterAnnounceIP,
		AnnounceHostname: s.opts.ClusterAnnounceHostname,
		Follow:           s.engine.ClusterFollow, Unfollow: s.engine.ClusterUnfollow,
		ReplOffset: s.engine.ClusterReplOffset, Pause: s.engine.ClusterPause, Logger: s.log, TLS: s.busTLS(),
		RequireFullCoverage: &full, DelSlotKeys: s.engine.ClusterDelSlotKeys,
		ValidityFactor: s.opts.ClusterValidityFactor, ReplPingPeriod: s.engine.ReplPingPeriod,
		MigrationBarrier: s.opts.ClusterMigrationBarrier, NoReplicaMigration: s.opts.ClusterNoReplicaMigration,
		NoFailover: s.opts.ClusterReplicaNoFailover, Deliver: s.engine.ClusterDeliver, AnnouncePort: s.opts.ClusterAnnouncePort,
		AnnounceBusPort: s.opts.ClusterAnnounceBusPort, AnnounceTLSPort: s.opts.ClusterAnnounceTLSPort,
	}, s.engine.ClusterState())
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	if s.link != nil {
		m.SetMasterDataAge(s.link.DataAge)
	}
	s.engine.SetClusterBus(m)
	s.transports = append(s.transports, m)
	s.log.Info("cluster bus", "myself", m.Myself(), "port", port, "config", file)
	return nil
}
