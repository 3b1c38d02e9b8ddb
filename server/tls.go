package server

// TLS listeners (tls:// targets, --tls-port): the server's TLS settings,
// the configuration every TLS listener shares, and the tls-* CONFIG
// parameters, which reload it without a restart.

import (
	"fmt"
	"strings"

	"github.com/goblin-kv/goblin/engine"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/uds"
)

// setupTLS builds the TLS configuration when a listener needs it; a bad
// file or setting refuses the start.
func (s *Server) setupTLS() error {
	need := false
	for _, l := range s.opts.Listen {
		if t, err := transport.ParseTarget(l); err == nil && t.Scheme == transport.TLS {
			need = true
		}
	}
	if !need {
		return nil
	}
	cfg, err := s.opts.TLS.ServerConfig()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrOptions, err)
	}
	s.tls = uds.NewTLSSource(cfg)
	return nil
}

// reloadTLS rebuilds the TLS configuration from the current settings (the
// files read again) and gives it to the TLS listeners: their new clients
// get it, the connected ones keep theirs. Without a TLS listener the
// settings are only kept.
func (s *Server) reloadTLS() error {
	if !s.tlsDirty {
		return nil
	}
	s.tlsDirty = false
	if err := s.reloadOutgoingTLS(); err != nil {
		return err
	}
	if s.tls == nil {
		return nil
	}
	cfg, err := s.opts.TLS.ServerConfig()
	if err != nil {
		s.log.Warn("TLS configuration not updated", "err", err)
		return fmt.Errorf("unable to update TLS configuration: %w", err)
	}
	s.tls.Replace(cfg)
	s.log.Info("TLS configuration reloaded", "cert", s.opts.TLS.CertFile)
	return nil
}

// tlsParams are the tls-* CONFIG parameters. Each CONFIG SET of them
// rebuilds the configuration once, after all its values are in (a new
// certificate and its key in one command).
func (s *Server) tlsParams() []engine.Param {
	o := &s.opts.TLS
	str := func(name string, field *string) engine.Param {
		return engine.Param{Name: name, Get: func() string { return *field },
			Set:   func(v string) error { *field = v; s.tlsDirty = true; return nil },
			Apply: s.reloadTLS}
	}
	yn := func(name string, get func() bool, set func(bool)) engine.Param {
		return engine.Param{Name: name, Get: func() string { return yesNo(get()) },
			Set: func(v string) error {
				b, err := parseYesNo(v)
				if err == nil {
					set(b)
					s.tlsDirty = true
				}
				return err
			},
			Apply: s.reloadTLS}
	}
	return []engine.Param{
		{Name: "tls-port", Get: func() string {
			for _, t := range s.targets {
				if t.Scheme == transport.TLS {
					if i := strings.LastIndexByte(t.Address, ':'); i >= 0 {
						return t.Address[i+1:]
					}
				}
			}
			return "0"
		}},
		str("tls-cert-file", &o.CertFile),
		str("tls-key-file", &o.KeyFile),
		str("tls-key-file-pass", &o.KeyFilePass),
		str("tls-ca-cert-file", &o.CACertFile),
		str("tls-ca-cert-dir", &o.CACertDir),
		str("tls-protocols", &o.Protocols),
		str("tls-ciphers", &o.Ciphers),
		str("tls-ciphersuites", &o.Ciphersuites),
		{Name: "tls-auth-clients", Get: func() string {
			m, _ := uds.AuthClientsMode(o.AuthClients)
			return m
		}, Set: func(v string) error {
			m, err := uds.AuthClientsMode(v)
			if err != nil {
				return fmt.Errorf("argument(s) must be one of the following: yes, no, optional")
			}
			o.AuthClients, s.tlsDirty = m, true
			return nil
		}, Apply: s.reloadTLS},
		yn("tls-prefer-server-ciphers", func() bool { return o.PreferServerCiphers }, func(b bool) { o.PreferServerCiphers = b }),
		yn("tls-session-caching", func() bool { return !o.SessionCachingOff }, func(b bool) { o.SessionCachingOff = !b }),
		str("tls-client-cert-file", &o.ClientCertFile),
		str("tls-client-key-file", &o.ClientKeyFile),
		str("tls-client-key-file-pass", &o.ClientKeyFilePass),
		yn("tls-replication", func() bool { return s.opts.TLSReplication }, func(b bool) { s.opts.TLSReplication = b }),
	}
}

// reloadOutgoingTLS gives the replication link the configuration it
// connects to its primary with from the next connection on: rebuilt from
// the files, or nil with tls-replication no.
func (s *Server) reloadOutgoingTLS() error {
	if s.link == nil {
		return nil
	}
	if !s.opts.TLSReplication {
		s.link.SetTLS(nil)
		return nil
	}
	cfg, err := s.opts.TLS.OutgoingConfig()
	if err != nil {
		s.log.Warn("TLS configuration for the replication link not updated", "err", err)
		return fmt.Errorf("unable to update TLS configuration: %w", err)
	}
	s.link.SetTLS(cfg)
	return nil
}
