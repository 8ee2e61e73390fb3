package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/server"
	"github.com/rboinc/rboinc/workflow/client"
)

// selfSigned writes a fresh self-signed certificate for 127.0.0.1 and its
// key into dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "rboinc test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600)
	return certFile, keyFile
}

// Hole 9: plain HTTP only. The standalone server speaks HTTPS when given a
// certificate, and the client trusts a self-signed one through -cacert.
func TestHole09TLS(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	v.e.Cfg.Simulated = false // no volunteer loop needed here
	certFile, keyFile := selfSigned(t, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	go func() {
		done <- server.ServeWith(ctx, v.e, server.Listen{Addr: "127.0.0.1:0", CertFile: certFile, KeyFile: keyFile}, log, func(a string) { addrc <- a })
	}()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		<-done
	})
	base := "https://" + addr + "/rboinc_cgi"

	cl, err := client.New(base, v.tokens["alice"])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Queues(ctx); err == nil || !errors.Is(err, client.ErrUnreachable) {
		t.Fatalf("an untrusted certificate was accepted: %v", err)
	}
	if err := cl.TrustCAFile(certFile); err != nil {
		t.Fatal(err)
	}
	qs, err := cl.Queues(ctx)
	if err != nil || len(qs) == 0 {
		t.Fatalf("over HTTPS with the CA file: %v %v", qs, err)
	}
	// Uploads go over the same TLS connection settings.
	up, err := cl.NewUpload(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "in")
	os.WriteFile(f, []byte("1 2 3\n"), 0o644)
	if err := cl.PutFile(ctx, up.DAVPath, md5of("1 2 3\n"), f, nil); err != nil {
		t.Fatalf("PUT over HTTPS: %v", err)
	}
	// Plain HTTP to the HTTPS port gets nothing useful.
	if resp, err := http.Get("http://" + addr + "/rboinc_cgi/api/v1/queues"); err == nil {
		resp.Body.Close()
		if resp.StatusCode/100 == 2 {
			t.Fatalf("plain HTTP answered %d", resp.StatusCode)
		}
	}
	if err := cl.TrustCAFile(filepath.Join(t.TempDir(), "none.pem")); err == nil || client.ExitCode(err) != client.ExitUsage {
		t.Errorf("missing CA file: %v", err)
	}
	if err := cl.TrustCAFile(keyFile); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("a key as CA file: %v", err)
	}
}

func TestServeTLSNeedsCertAndKey(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	certFile, keyFile := selfSigned(t, t.TempDir())
	for _, l := range []server.Listen{{Addr: "127.0.0.1:0", CertFile: certFile}, {Addr: "127.0.0.1:0", KeyFile: keyFile}, {Addr: "127.0.0.1:0", CertFile: keyFile, KeyFile: certFile}} {
		err := server.ServeWith(context.Background(), v.e, l, log, nil)
		if err == nil || !(strings.Contains(err.Error(), "--tls-key") || strings.Contains(err.Error(), "TLS certificate")) {
			t.Errorf("%+v: %v", l, err)
		}
	}
}
