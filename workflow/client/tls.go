package client

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
)

// TrustCAFile makes the client also trust the PEM certificates in path
// (e.g. a self-signed server certificate, or a private CA) besides the
// system's.
func (c *Client) TrustCAFile(path string) error {
	pem, err := os.ReadFile(path)
	if err != nil {
		return Usagef("reading the CA file: %v", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return Usagef("CA file %s holds no PEM certificate", path)
	}
	tr, ok := c.HTTP.Transport.(*http.Transport)
	if !ok {
		return fmt.Errorf("cannot set a CA file on this client's transport")
	}
	tr = tr.Clone()
	if tr.TLSClientConfig == nil {
		tr.TLSClientConfig = &tls.Config{}
	}
	tr.TLSClientConfig.RootCAs = pool
	c.HTTP.Transport = tr
	return nil
}
