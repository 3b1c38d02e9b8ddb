package uds

// This file turns Redis's tls-* settings into a crypto/tls configuration,
// for the server (TLSOptions.ServerConfig) and for clients
// (ClientTLSConfig), and holds the server's current one (TLSSource), which
// CONFIG SET replaces without a restart.

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"
)

// ErrTLS is wrapped by every error building a TLS configuration.
var ErrTLS = errors.New("tls")

// TLSOptions are Redis 7.0's tls-* settings for the server side. The zero
// value is Redis's defaults but for the files: AuthClients "" is "yes",
// Protocols "" is "TLSv1.2 TLSv1.3", SessionCachingOff false keeps session
// tickets on.
type TLSOptions struct {
	CertFile, KeyFile, KeyFilePass string // tls-cert-file, tls-key-file, tls-key-file-pass
	CACertFile, CACertDir          string // tls-ca-cert-file, tls-ca-cert-dir
	// AuthClients is tls-auth-clients: "yes" (a client certificate signed
	// by the CA is required), "optional" (checked when given) or "no".
	AuthClients string
	// Protocols is tls-protocols: space-separated TLSv1, TLSv1.1, TLSv1.2,
	// TLSv1.3.
	Protocols string
	// Ciphers is tls-ciphers (TLS 1.2 and older): a colon-separated list
	// of OpenSSL or IANA suite names that crypto/tls implements.
	Ciphers string
	// Ciphersuites is tls-ciphersuites (TLS 1.3). crypto/tls always
	// offers its three TLS 1.3 suites and cannot restrict them, so only a
	// list naming all three is accepted.
	Ciphersuites string
	// PreferServerCiphers is tls-prefer-server-ciphers. crypto/tls always
	// picks the suite by its own preference order (the server's), so "no"
	// behaves as "yes"; docs/security.md says so.
	PreferServerCiphers bool
	// SessionCachingOff is tls-session-caching no: no session tickets, so
	// every reconnect makes a full handshake.
	SessionCachingOff bool
	// SessionCacheSize is tls-session-cache-size: how many sessions the
	// server keeps for resumption (tlssession.go). 0 is Redis's default,
	// 20480; a negative value is Redis's 0, no bound.
	SessionCacheSize int
	// SessionCacheTimeout is tls-session-cache-timeout: a session older
	// than this is not resumed. 0 is Redis's default, 300 seconds; a
	// negative value is Redis's 0 (none is resumed).
	SessionCacheTimeout time.Duration
	// ClientCertFile, ClientKeyFile and ClientKeyFilePass are
	// tls-client-cert-file, tls-client-key-file and
	// tls-client-key-file-pass: the certificate this server presents when
	// it connects out (to its primary, with tls-replication); empty: the
	// server's own tls-cert-file and tls-key-file, as Redis does.
	ClientCertFile, ClientKeyFile, ClientKeyFilePass string
}

// OutgoingConfig builds the configuration this server connects out with
// (tls-replication): the primary's certificate is checked against
// tls-ca-cert-file/dir (the system's roots without one), and the server
// presents tls-client-cert-file, else tls-cert-file, when one is set.
func (o TLSOptions) OutgoingConfig() (*tls.Config, error) {
	cfg := &tls.Config{SessionTicketsDisabled: o.SessionCachingOff}
	if o.CACertFile != "" || o.CACertDir != "" {
		pool, err := loadCAs(o.CACertFile, o.CACertDir)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	cert, key, pass := o.ClientCertFile, o.ClientKeyFile, o.ClientKeyFilePass
	if cert == "" && key == "" {
		cert, key, pass = o.CertFile, o.KeyFile, o.KeyFilePass
	}
	if cert != "" || key != "" {
		if cert == "" || key == "" {
			return nil, fmt.Errorf("%w: a client certificate needs both tls-client-cert-file and tls-client-key-file", ErrTLS)
		}
		c, err := loadKeyPair(cert, key, pass)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	var err error
	if cfg.MinVersion, cfg.MaxVersion, err = parseProtocols(o.Protocols); err != nil {
		return nil, err
	}
	if o.Ciphers != "" {
		if cfg.CipherSuites, err = parseCiphers(o.Ciphers); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

// AuthClientsMode checks and normalises tls-auth-clients.
func AuthClientsMode(v string) (string, error) {
	switch strings.ToLower(v) {
	case "", "yes":
		return "yes", nil
	case "no":
		return "no", nil
	case "optional":
		return "optional", nil
	}
	return "", fmt.Errorf("%w: tls-auth-clients %q: want yes, no or optional", ErrTLS, v)
}

// ServerConfig builds the server's tls.Config from the files and settings.
func (o TLSOptions) ServerConfig() (*tls.Config, error) {
	if o.CertFile == "" || o.KeyFile == "" {
		return nil, fmt.Errorf("%w: a TLS listener needs tls-cert-file and tls-key-file", ErrTLS)
	}
	cert, err := loadKeyPair(o.CertFile, o.KeyFile, o.KeyFilePass)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, SessionTicketsDisabled: o.SessionCachingOff}
	mode, err := AuthClientsMode(o.AuthClients)
	if err != nil {
		return nil, err
	}
	if o.CACertFile != "" || o.CACertDir != "" {
		if cfg.ClientCAs, err = loadCAs(o.CACertFile, o.CACertDir); err != nil {
			return nil, err
		}
	}
	switch mode {
	case "yes", "optional":
		if cfg.ClientCAs == nil {
			// Redis's own check: it cannot verify clients without a CA.
			return nil, fmt.Errorf("%w: tls-auth-clients %s needs tls-ca-cert-file or tls-ca-cert-dir (the CA client certificates are checked against); set tls-auth-clients no to accept clients without one", ErrTLS, mode)
		}
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
		if mode == "optional" {
			cfg.ClientAuth = tls.VerifyClientCertIfGiven
		}
	}
	if cfg.MinVersion, cfg.MaxVersion, err = parseProtocols(o.Protocols); err != nil {
		return nil, err
	}
	if o.Ciphers != "" {
		if cfg.CipherSuites, err = parseCiphers(o.Ciphers); err != nil {
			return nil, err
		}
	}
	if err := checkCiphersuites(o.Ciphersuites); err != nil {
		return nil, err
	}
	if !o.SessionCachingOff {
		size, timeout := o.SessionCacheSize, o.SessionCacheTimeout
		switch {
		case size == 0:
			size = DefaultSessionCacheSize
		case size < 0:
			size = 0 // no bound
		}
		switch {
		case timeout == 0:
			timeout = DefaultSessionCacheTimeout * time.Second
		case timeout < 0:
			timeout = 0
		}
		newSessionCache(size, timeout).install(cfg)
	}
	return cfg, nil
}

// ClientTLSFiles are a client's TLS settings, as redis-cli's --cacert,
// --cacertdir, --cert, --key, --sni and --insecure.
type ClientTLSFiles struct {
	CACert, CACertDir string
	Cert, Key         string
	ServerName        string
	Insecure          bool // do not verify the server's certificate
}

// ClientTLSConfig builds a client's tls.Config. With no CA it trusts the
// system's roots.
func ClientTLSConfig(f ClientTLSFiles) (*tls.Config, error) {
	cfg := &tls.Config{ServerName: f.ServerName, InsecureSkipVerify: f.Insecure}
	if f.CACert != "" || f.CACertDir != "" {
		pool, err := loadCAs(f.CACert, f.CACertDir)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	if f.Cert != "" || f.Key != "" {
		if f.Cert == "" || f.Key == "" {
			return nil, fmt.Errorf("%w: a client certificate needs both --cert and --key", ErrTLS)
		}
		cert, err := loadKeyPair(f.Cert, f.Key, "")
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// loadKeyPair reads a certificate and its key; pass decrypts a key in the
// legacy encrypted PEM format (Proc-Type: 4,ENCRYPTED, as openssl genrsa
// -aes256 writes). crypto/x509 cannot decrypt PKCS#8 "ENCRYPTED PRIVATE
// KEY" files; those are refused with a hint.
func loadKeyPair(certFile, keyFile, pass string) (tls.Certificate, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%w: tls-cert-file: %w", ErrTLS, err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%w: tls-key-file: %w", ErrTLS, err)
	}
	if block, _ := pem.Decode(keyPEM); block != nil {
		switch {
		case block.Type == "ENCRYPTED PRIVATE KEY":
			return tls.Certificate{}, fmt.Errorf("%w: tls-key-file %s is a PKCS#8 encrypted key, which Go's crypto/x509 cannot decrypt: convert it (openssl pkey -in KEY -out PLAIN.key, or openssl rsa -aes256 for the legacy format)", ErrTLS, keyFile)
		//lint:ignore SA1019 legacy PEM encryption is what tls-key-file-pass has to read; it is insecure as a format, not as a reader of one.
		case x509.IsEncryptedPEMBlock(block):
			if pass == "" {
				return tls.Certificate{}, fmt.Errorf("%w: tls-key-file %s is encrypted and tls-key-file-pass is not set", ErrTLS, keyFile)
			}
			//lint:ignore SA1019 see above.
			der, err := x509.DecryptPEMBlock(block, []byte(pass))
			if err != nil {
				return tls.Certificate{}, fmt.Errorf("%w: tls-key-file %s: decrypting with tls-key-file-pass: %w", ErrTLS, keyFile, err)
			}
			keyPEM = pem.EncodeToMemory(&pem.Block{Type: block.Type, Bytes: der})
		}
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%w: tls-cert-file %s and tls-key-file %s: %w", ErrTLS, certFile, keyFile, err)
	}
	return cert, nil
}

// loadCAs reads the CA certificates of a file and of every file in a
// directory that holds PEM certificates.
func loadCAs(file, dir string) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("%w: CA certificate file: %w", ErrTLS, err)
		}
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("%w: CA certificate file %s holds no PEM certificate", ErrTLS, file)
		}
	}
	if dir != "" {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("%w: CA certificate directory: %w", ErrTLS, err)
		}
		found := false
		for _, e := range ents {
			if e.IsDir() {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err == nil && pool.AppendCertsFromPEM(b) {
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("%w: CA certificate directory %s holds no PEM certificate", ErrTLS, dir)
		}
	}
	return pool, nil
}

// parseProtocols reads tls-protocols into a version range ("" is Redis's
// default, TLSv1.2 and TLSv1.3). crypto/tls takes a range, so a list with a
// gap (TLSv1 TLSv1.2) is refused rather than widened.
func parseProtocols(s string) (lo, hi uint16, err error) {
	if strings.TrimSpace(s) == "" {
		return tls.VersionTLS12, tls.VersionTLS13, nil
	}
	vers := map[string]uint16{"tlsv1": tls.VersionTLS10, "tlsv1.1": tls.VersionTLS11, "tlsv1.2": tls.VersionTLS12, "tlsv1.3": tls.VersionTLS13}
	var got []uint16
	for _, f := range strings.Fields(s) {
		v, ok := vers[strings.ToLower(f)]
		if !ok {
			return 0, 0, fmt.Errorf("%w: tls-protocols %q: unknown protocol %q (want TLSv1, TLSv1.1, TLSv1.2 or TLSv1.3)", ErrTLS, s, f)
		}
		got = append(got, v)
	}
	sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
	for i := 1; i < len(got); i++ {
		if got[i]-got[i-1] > 1 {
			return 0, 0, fmt.Errorf("%w: tls-protocols %q leaves a gap, which Go's crypto/tls cannot serve (it takes a range of versions)", ErrTLS, s)
		}
	}
	return got[0], got[len(got)-1], nil
}

// openSSLNames maps OpenSSL's names of the TLS 1.2 suites crypto/tls
// implements to their IANA names.
var openSSLNames = map[string]string{
	"ECDHE-ECDSA-AES128-GCM-SHA256": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
	"ECDHE-RSA-AES128-GCM-SHA256":   "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
	"ECDHE-ECDSA-AES256-GCM-SHA384": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
	"ECDHE-RSA-AES256-GCM-SHA384":   "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
	"ECDHE-ECDSA-CHACHA20-POLY1305": "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
	"ECDHE-RSA-CHACHA20-POLY1305":   "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
	"ECDHE-ECDSA-AES128-SHA":        "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
	"ECDHE-RSA-AES128-SHA":          "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
	"ECDHE-ECDSA-AES256-SHA":        "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
	"ECDHE-RSA-AES256-SHA":          "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
	"AES128-GCM-SHA256":             "TLS_RSA_WITH_AES_128_GCM_SHA256",
	"AES256-GCM-SHA384":             "TLS_RSA_WITH_AES_256_GCM_SHA384",
	"AES128-SHA":                    "TLS_RSA_WITH_AES_128_CBC_SHA",
	"AES256-SHA":                    "TLS_RSA_WITH_AES_256_CBC_SHA",
}

// parseCiphers reads tls-ciphers: suite names separated by colons.
// OpenSSL's keywords and operators (HIGH, !aNULL, @STRENGTH) have no
// crypto/tls equivalent and are refused with the names that are accepted.
func parseCiphers(s string) ([]uint16, error) {
	ids := map[string]uint16{}
	for _, c := range tls.CipherSuites() {
		ids[c.Name] = c.ID
	}
	var out []uint16
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ':' || r == ',' || r == ' ' }) {
		name := f
		if iana, ok := openSSLNames[strings.ToUpper(f)]; ok {
			name = iana
		}
		id, ok := ids[strings.ToUpper(name)]
		if !ok {
			known := make([]string, 0, len(openSSLNames))
			for k := range openSSLNames {
				known = append(known, k)
			}
			sort.Strings(known)
			return nil, fmt.Errorf("%w: tls-ciphers: %q is not a cipher suite Go's crypto/tls implements (OpenSSL keywords such as HIGH or !aNULL are not understood); name suites, colon-separated, from: %s", ErrTLS, f, strings.Join(known, ":"))
		}
		out = append(out, id)
	}
	return out, nil
}

// tls13Suites are the TLS 1.3 suites crypto/tls offers, always all three.
var tls13Suites = []string{"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"}

// checkCiphersuites accepts tls-ciphersuites only when it names every
// TLS 1.3 suite crypto/tls offers: it cannot offer fewer, and accepting a
// shorter list would promise what the server does not do.
func checkCiphersuites(s string) error {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	seen := map[string]bool{}
	for _, f := range strings.Split(s, ":") {
		f = strings.ToUpper(strings.TrimSpace(f))
		known := false
		for _, t := range tls13Suites {
			known = known || t == f
		}
		if !known {
			return fmt.Errorf("%w: tls-ciphersuites: %q is not a TLS 1.3 suite (want %s)", ErrTLS, f, strings.Join(tls13Suites, ":"))
		}
		seen[f] = true
	}
	if len(seen) != len(tls13Suites) {
		return fmt.Errorf("%w: tls-ciphersuites %q: Go's crypto/tls always offers all of %s and cannot restrict TLS 1.3 suites; leave it empty or name all three", ErrTLS, s, strings.Join(tls13Suites, ":"))
	}
	return nil
}

// TLSSource holds a TLS listener's current configuration. Replace swaps
// it (CONFIG SET of a tls-* parameter, which reloads the certificate
// files): clients connected before keep their session, clients that
// connect after get the new configuration. Safe for concurrent use.
type TLSSource struct {
	cur atomic.Pointer[tls.Config]
}

// NewTLSSource returns a source holding cfg.
func NewTLSSource(cfg *tls.Config) *TLSSource {
	s := &TLSSource{}
	s.cur.Store(cfg)
	return s
}

// Replace makes cfg the configuration of the connections accepted from
// now on.
func (s *TLSSource) Replace(cfg *tls.Config) { s.cur.Store(cfg) }

// Config returns the current configuration.
func (s *TLSSource) Config() *tls.Config { return s.cur.Load() }
