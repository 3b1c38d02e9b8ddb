package uds

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
)

// PeerConfig builds the configuration a node dials its cluster peers with
// (tls-cluster): OutgoingConfig's certificate and versions, and the
// peer's certificate checked against tls-ca-cert-file/dir (the system's
// roots without one) but not against a host name. Peers are dialled at
// the addresses they announce, usually bare IPs their certificates do not
// name, and Redis checks only the chain there too.
func (o TLSOptions) PeerConfig() (*tls.Config, error) {
	cfg, err := o.OutgoingConfig()
	if err != nil {
		return nil, err
	}
	roots := cfg.RootCAs
	cfg.InsecureSkipVerify = true // the chain is checked below, the name is not
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("tls: the cluster peer sent no certificate")
		}
		inter := x509.NewCertPool()
		for _, c := range cs.PeerCertificates[1:] {
			inter.AddCert(c)
		}
		_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
		if err != nil {
			return fmt.Errorf("tls: the cluster peer's certificate: %w", err)
		}
		return nil
	}
	return cfg, nil
}
