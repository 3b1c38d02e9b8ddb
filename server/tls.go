package server

// TLS listeners (tls:// targets, --tls-port): the server's TLS settings,
// the configuration every TLS listener shares, and the tls-* CONFIG
// parameters, which reload it without a restart.

import (
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"time"

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

// applyTLS is the Apply of every tls-* parameter: when one changed it
// builds every TLS configuration from the current settings (the files
// read again; the server's once, for the listeners and the cluster bus's
// inbound links alike), moves, opens or closes the TLS listeners when
// tls-port changed, and only once all of that succeeded stores the new
// configurations: the listeners' new clients, the replication link's next
// connection and the bus's next links get them, connected ones keep
// theirs. Without a TLS listener the settings are only kept (and checked
// when tls-port opens one). Nothing changes on an error. Loop goroutine.
func (s *Server) applyTLS() error {
	dirty, portDirty := s.tlsDirty, s.tlsPortDirty
	s.tlsDirty, s.tlsPortDirty = false, false // the other parameters' Apply calls of this CONFIG SET find nothing to do
	busOn := s.opts.ClusterEnabled && s.opts.TLSCluster
	var srv *tls.Config
	if dirty && (s.tls != nil || busOn) || portDirty && s.tls == nil && s.tlsPortWant != 0 {
		c, err := s.opts.TLS.ServerConfig()
		if err != nil {
			s.log.Warn("TLS configuration not updated", "err", err)
			return fmt.Errorf("unable to update TLS configuration: %w", err)
		}
		srv = c
	}
	var out, busSrv, busCli *tls.Config
	if dirty {
		var err error
		if out, err = s.outgoingTLS(); err != nil {
			return err
		}
		if busSrv, busCli, err = s.busTLSConfigs(srv); err != nil {
			return fmt.Errorf("unable to update TLS configuration: %w", err)
		}
	}
	if portDirty {
		if err := s.moveTLSPort(srv); err != nil {
			return err
		}
	}
	if !dirty {
		return nil
	}
	if s.link != nil {
		s.link.SetTLS(out)
	}
	s.bus.server.Store(busSrv)
	s.bus.client.Store(busCli)
	if srv != nil && s.tls != nil {
		s.tls.Replace(srv)
		s.log.Info("TLS configuration reloaded", "cert", s.opts.TLS.CertFile)
	}
	return nil
}

// tlsListeners returns the TLS socket listeners: those tls-port (or a
// tls:// target) opened at start and those CONFIG SET tls-port opened
// since.
func (s *Server) tlsListeners() []*uds.Server {
	var out []*uds.Server
	for _, t := range s.transports {
		if u, ok := t.(*uds.Server); ok && u.Target().Scheme == transport.TLS {
			out = append(out, u)
		}
	}
	return out
}

// currentTLSPort is the port the TLS listeners accept on, 0 when none
// does.
func (s *Server) currentTLSPort() int {
	for _, u := range s.tlsListeners() {
		if u.Listening() {
			if _, p, err := net.SplitHostPort(u.Addr()); err == nil {
				n, _ := strconv.Atoi(p)
				return n
			}
		}
	}
	return 0
}

// moveTLSPort makes the TLS listeners accept on s.tlsPortWant, as Redis's
// CONFIG SET tls-port does: each listener binds its host at the new port
// before its old socket closes, and connected clients stay; 0 closes the
// listening sockets. A server that has no TLS listener yet opens one on
// each host a tcp:// listener binds (127.0.0.1 without one) with cfg, the
// configuration just built. On an error the listeners are back where
// they were.
func (s *Server) moveTLSPort(cfg *tls.Config) error {
	want := s.tlsPortWant
	ls := s.tlsListeners()
	if len(ls) == 0 {
		if want == 0 {
			return nil
		}
		return s.openTLSListeners(cfg, want)
	}
	type undo struct {
		u         *uds.Server
		addr      string
		listening bool
	}
	var done []undo
	for _, u := range ls {
		host, _, _ := net.SplitHostPort(u.Addr())
		to := ""
		if want != 0 {
			to = net.JoinHostPort(host, strconv.Itoa(want))
		}
		prev := undo{u, u.Addr(), u.Listening()}
		if err := u.Relisten(to); err != nil {
			for i := len(done) - 1; i >= 0; i-- {
				back := ""
				if done[i].listening {
					back = done[i].addr
				}
				if rerr := done[i].u.Relisten(back); rerr != nil {
					s.log.Warn("TLS listener not restored after a failed CONFIG SET tls-port", "target", "tls://"+done[i].addr, "err", rerr)
				}
			}
			s.log.Warn("CONFIG SET tls-port: cannot listen", "port", want, "err", err)
			return fmt.Errorf("unable to listen on this port: %w", err)
		}
		done = append(done, prev)
	}
	for i, t := range s.targets {
		for _, d := range done {
			if t.Scheme == transport.TLS && t.Address == d.addr {
				s.targets[i].Address = d.u.Addr()
			}
		}
	}
	for _, d := range done {
		if want == 0 {
			s.log.Info("TLS listener closed (CONFIG SET tls-port 0): connected clients stay", "target", "tls://"+d.addr)
		} else {
			s.log.Info("listening", "target", d.u.Target().String(), "was", "tls://"+d.addr)
		}
	}
	return nil
}

// openTLSListeners opens the first TLS listeners at run time, on port.
func (s *Server) openTLSListeners(cfg *tls.Config, port int) error {
	src := uds.NewTLSSource(cfg)
	env := s.env
	env.TLS = src
	var built []transport.Server
	for _, l := range TLSPortTargets(s.listen, port) {
		t, err := transport.ParseTarget(l)
		if err == nil {
			var tr transport.Server
			if tr, err = Build(t, &env); err == nil {
				built = append(built, tr)
				continue
			}
		}
		for _, b := range built {
			b.Close()
		}
		s.log.Warn("CONFIG SET tls-port: cannot listen", "target", l, "err", err)
		return fmt.Errorf("unable to listen on this port: %w", err)
	}
	for _, tr := range built {
		if err := s.loop.Add(tr); err != nil { // a socket listener always joins
			tr.Close()
			return err
		}
		s.transports = append(s.transports, tr)
		t := tr.(*uds.Server).Target()
		s.targets = append(s.targets, t)
		s.log.Info("listening", "target", t.String())
	}
	s.tls = src
	return nil
}

// TLSPortTargets returns the tls:// targets tls-port (the --tls-port flag,
// the directive, CONFIG SET) opens at port: one on each host a tcp://
// target of listen binds, 127.0.0.1 without one.
func TLSPortTargets(listen []string, port int) []string {
	var hosts []string
	for _, l := range listen {
		if t, err := transport.ParseTarget(l); err == nil && t.Scheme == transport.TCP {
			if h, _, err := net.SplitHostPort(t.Address); err == nil && !slices.Contains(hosts, h) {
				hosts = append(hosts, h)
			}
		}
	}
	if len(hosts) == 0 {
		hosts = []string{"127.0.0.1"}
	}
	out := make([]string, len(hosts))
	for i, h := range hosts {
		out[i] = "tls://" + net.JoinHostPort(h, strconv.Itoa(port))
	}
	return out
}

// tlsParams are the tls-* CONFIG parameters. Each CONFIG SET of them
// rebuilds the configuration once, after all its values are in (a new
// certificate and its key in one command).
func (s *Server) tlsParams() []engine.Param {
	o := &s.opts.TLS
	str := func(name string, field *string) engine.Param {
		return engine.Param{Name: name, Get: func() string { return *field },
			Set:   func(v string) error { *field = v; s.tlsDirty = true; return nil },
			Apply: s.applyTLS}
	}
	yn := func(name string, get func() bool, set func(bool)) engine.Param {
		p := engine.YesNoParam(name, get, func(b bool) { set(b); s.tlsDirty = true })
		p.Apply = s.applyTLS
		return p
	}
	cacheInt := func(name string, def int, get func() int, set func(int)) engine.Param {
		return engine.Param{Name: name, Get: func() string { return strconv.Itoa(sessionCacheValue(get(), def)) },
			Set: func(v string) error {
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 || n > math.MaxInt32 || strconv.Itoa(n) != v {
					return fmt.Errorf("argument must be between 0 and %d inclusive", math.MaxInt32)
				}
				if n == 0 {
					n = -1
				}
				set(n)
				s.tlsDirty = true
				return nil
			}, Apply: s.applyTLS}
	}
	return []engine.Param{
		{Name: "tls-port", Get: func() string { return strconv.Itoa(s.tlsPortWant) },
			Set: func(v string) error {
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 || n > 65535 || strconv.Itoa(n) != v {
					return errors.New("argument must be between 0 and 65535 inclusive")
				}
				s.tlsPortWant, s.tlsPortDirty = n, n != s.currentTLSPort()
				return nil
			}, Apply: s.applyTLS},
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
		}, Apply: s.applyTLS},
		yn("tls-prefer-server-ciphers", func() bool { return o.PreferServerCiphers }, func(b bool) { o.PreferServerCiphers = b }),
		yn("tls-session-caching", func() bool { return !o.SessionCachingOff }, func(b bool) { o.SessionCachingOff = !b }),
		// The session cache (transport/uds/tlssession.go): the options
		// keep 0 for Redis's default and a negative value for Redis's 0.
		cacheInt("tls-session-cache-size", uds.DefaultSessionCacheSize,
			func() int { return o.SessionCacheSize }, func(n int) { o.SessionCacheSize = n }),
		cacheInt("tls-session-cache-timeout", uds.DefaultSessionCacheTimeout,
			func() int { return int(o.SessionCacheTimeout / time.Second) },
			func(n int) { o.SessionCacheTimeout = time.Duration(n) * time.Second }),
		str("tls-client-cert-file", &o.ClientCertFile),
		str("tls-client-key-file", &o.ClientKeyFile),
		str("tls-client-key-file-pass", &o.ClientKeyFilePass),
		yn("tls-replication", func() bool { return s.opts.TLSReplication }, func(b bool) { s.opts.TLSReplication = b }),
		yn("tls-cluster", func() bool { return s.opts.TLSCluster }, func(b bool) { s.opts.TLSCluster = b }),
	}
}

// sessionCacheValue turns a session cache option (0: the default,
// negative: Redis's 0) into the value Redis's CONFIG GET shows.
func sessionCacheValue(n, def int) int {
	switch {
	case n == 0:
		return def
	case n < 0:
		return 0
	}
	return n
}

// outgoingTLS builds the configuration the replication link connects to
// its primary with (applyTLS stores it, for the next connection): from the
// files, or nil with tls-replication no or no link.
func (s *Server) outgoingTLS() (*tls.Config, error) {
	if s.link == nil || !s.opts.TLSReplication {
		return nil, nil
	}
	cfg, err := s.opts.TLS.OutgoingConfig()
	if err != nil {
		s.log.Warn("TLS configuration for the replication link not updated", "err", err)
		return nil, fmt.Errorf("unable to update TLS configuration: %w", err)
	}
	return cfg, nil
}
