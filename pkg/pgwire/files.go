package pgwire

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"sync/atomic"
)

// LoadUserList reads a pgbouncer-style userlist file (ReadUserList) by
// path, for servers configured with an auth file.
func LoadUserList(path string) (map[string]Credential, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("auth file: %w", err)
	}
	defer f.Close()
	u, err := ReadUserList(f, path)
	if err != nil {
		return nil, fmt.Errorf("auth file: %w", err)
	}
	return u, nil
}

// LoadTLS reads a PEM certificate and key into the server TLS settings
// every tool uses (TLS 1.2 or newer).
func LoadTLS(certFile, keyFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// Certificate is a server certificate that can be replaced while serving
// (a certificate renewed on disk, then a reload): each TLS handshake
// takes the current one, connections already open keep theirs.
type Certificate struct {
	cert atomic.Pointer[tls.Certificate]
}

// LoadCertificate reads a PEM certificate and key; Config gives the TLS
// settings that serve it.
func LoadCertificate(certFile, keyFile string) (*Certificate, error) {
	c := &Certificate{}
	if err := c.Reload(certFile, keyFile); err != nil {
		return nil, err
	}
	return c, nil
}

// Reload reads the certificate and key again; on error the current pair
// stays.
func (c *Certificate) Reload(certFile, keyFile string) error {
	cert, err := ReadCertificate(certFile, keyFile)
	if err != nil {
		return err
	}
	c.Set(cert)
	return nil
}

// ReadCertificate reads a PEM certificate and key for Set: a reload that
// may still fail at a later step reads first and installs last.
func ReadCertificate(certFile, keyFile string) (*tls.Certificate, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	return &cert, nil
}

// Set makes cert the one served from the next handshake on.
func (c *Certificate) Set(cert *tls.Certificate) { c.cert.Store(cert) }

// Config is the server TLS settings (TLS 1.2 or newer) with c's current
// certificate.
func (c *Certificate) Config() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return c.cert.Load(), nil }}
}

// LoadCAs reads PEM certificate authorities, to verify the certificates
// clients present (tls.Config.ClientCAs).
func LoadCAs(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tls ca file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("tls ca file %s: no PEM certificate in it", path)
	}
	return pool, nil
}
