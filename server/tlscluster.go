package server

// tls-cluster: the cluster bus's links over TLS. The bus asks for its
// configurations on every new link (cluster/member/tls.go), so these
// hold the current ones, rebuilt with the other TLS settings by CONFIG
// SET; nil while tls-cluster is no.

import (
	"crypto/tls"
	"sync/atomic"

	"github.com/goblin-kv/goblin/cluster/member"
)

// busConfigs are the bus's TLS configurations. Written on the loop
// goroutine (start, CONFIG SET), read on the bus's accept and dial
// goroutines; the atomic pointers order the two.
type busConfigs struct {
	server, client atomic.Pointer[tls.Config]
}

// busTLS gives the bus its TLS configurations (nil without
// --cluster-enabled's bus: nothing reads them).
func (s *Server) busTLS() *member.BusTLS {
	return &member.BusTLS{Server: s.bus.server.Load, Client: s.bus.client.Load}
}

// reloadBusTLS builds the bus's configurations from the current settings
// (none with tls-cluster no, or without the cluster bus): the node's
// certificate served to inbound links, which are asked for theirs as
// tls-auth-clients says; outbound links present tls-client-cert-file (else
// tls-cert-file) and check the peer's chain, not its name. On an error
// nothing changes.
func (s *Server) reloadBusTLS() error {
	srv, cli, err := s.busTLSConfigs(nil)
	if err != nil {
		return err
	}
	s.bus.server.Store(srv)
	s.bus.client.Store(cli)
	return nil
}

// busTLSConfigs builds the bus's configurations without storing them:
// srv is the server's configuration when the caller built it already (it
// serves the bus's inbound links as it serves the clients', as Redis's
// one SSL_CTX does), nil to build it here. Both are nil with tls-cluster
// no or without the bus.
func (s *Server) busTLSConfigs(srv *tls.Config) (server, client *tls.Config, err error) {
	if !s.opts.ClusterEnabled || !s.opts.TLSCluster {
		return nil, nil, nil
	}
	if srv == nil {
		if srv, err = s.opts.TLS.ServerConfig(); err != nil {
			s.log.Warn("TLS configuration of the cluster bus not updated", "err", err)
			return nil, nil, err
		}
	}
	cli, err := s.opts.TLS.PeerConfig()
	if err != nil {
		s.log.Warn("TLS configuration of the cluster bus not updated", "err", err)
		return nil, nil, err
	}
	return srv, cli, nil
}
