// Package testcerts writes the certificates a TLS test needs, as Redis's
// utils/gen-test-certs.sh does with openssl: a CA, a server certificate for
// localhost and 127.0.0.1 signed by it, and a client certificate signed by
// it, each key beside its certificate (PEM). ECDSA P-256 keys keep it fast.
package testcerts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Files are the paths Write wrote.
type Files struct {
	Dir                   string
	CACert, CAKey         string
	ServerCert, ServerKey string
	ClientCert, ClientKey string
}

// Write writes a fresh CA, server and client certificate into dir; name
// prefixes the files (so one directory can hold two sets, for rotation).
func Write(dir, name string) (Files, error) {
	f := Files{Dir: dir}
	p := func(s string) string { return filepath.Join(dir, name+s) }
	f.CACert, f.CAKey = p("ca.crt"), p("ca.key")
	f.ServerCert, f.ServerKey = p("server.crt"), p("server.key")
	f.ClientCert, f.ClientKey = p("client.crt"), p("client.key")

	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return f, err
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{Organization: []string{"goblin test"}, CommonName: name + "Certificate Authority"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return f, err
	}
	if ca, err = x509.ParseCertificate(caDER); err != nil {
		return f, err
	}
	if err := writePEM(f.CACert, "CERTIFICATE", caDER); err != nil {
		return f, err
	}
	if err := writeKey(f.CAKey, caKey); err != nil {
		return f, err
	}
	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage, certPath, keyPath string) error {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{Organization: []string{"goblin test"}, CommonName: cn},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return err
		}
		if err := writePEM(certPath, "CERTIFICATE", der); err != nil {
			return err
		}
		return writeKey(keyPath, key)
	}
	if err := leaf(2, "Server-only", x509.ExtKeyUsageServerAuth, f.ServerCert, f.ServerKey); err != nil {
		return f, err
	}
	if err := leaf(3, "Client-only", x509.ExtKeyUsageClientAuth, f.ClientCert, f.ClientKey); err != nil {
		return f, err
	}
	return f, nil
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, "EC PRIVATE KEY", der)
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
