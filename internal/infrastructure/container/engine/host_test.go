package engine_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/infrastructure/container/engine"
	"github.com/awf-dev/awf/internal/infrastructure/container/engine/enginetest"
)

func TestNegotiation(t *testing.T) {
	tests := []struct {
		name    string
		engine  string // the API-Version header of the ping; "" sends none
		fixed   string // Options.APIVersion
		want    []string
		wantErr string
	}{
		{"an older engine: its version", "1.41", "", []string{"/_ping", "/v1.41/containers/c/start", "/v1.41/containers/c/start"}, ""},
		{"a newer engine: the client's highest", "1.99", "", []string{"/_ping", "/v" + engine.MaxAPIVersion + "/containers/c/start",
			"/v" + engine.MaxAPIVersion + "/containers/c/start"}, ""},
		{"a fixed version: no ping", "1.41", "v1.43", []string{"/v1.43/containers/c/start", "/v1.43/containers/c/start"}, ""},
		{"an engine too old", "1.24", "", []string{"/_ping", "/_ping"}, "too old"},
		{"an engine that does not say", "", "", []string{"/_ping", "/_ping"}, "did not say its API version"},
		{"a version that is not one", "latest", "", []string{"/_ping", "/_ping"}, "want MAJOR.MINOR"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{t: t, status: 204}
			if tc.engine != "" {
				rec.header = map[string]string{"API-Version": tc.engine}
			}
			c, err := engine.New(engine.Options{Host: enginetest.Serve(t, rec), APIVersion: tc.fixed})
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				err = c.StartContainer(t.Context(), "c")
				if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
					t.Errorf("StartContainer = %v, want error %q", err, tc.wantErr)
				}
			}
			var paths []string
			for _, r := range rec.requests() {
				paths = append(paths, r.Path)
			}
			if diff := cmp.Diff(tc.want, paths); diff != "" {
				t.Errorf("paths (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNegotiationRetriedAfterAFailure(t *testing.T) {
	pings := 0
	c, err := engine.New(engine.Options{Host: enginetest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/_ping" {
			pings++
			if pings == 1 {
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
			w.Header().Set("API-Version", "1.41")
		}
		w.WriteHeader(http.StatusNoContent)
	}))})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.StartContainer(t.Context(), "c"); err == nil {
		t.Errorf("StartContainer after a failed ping: no error")
	}
	if err := c.StartContainer(t.Context(), "c"); err != nil || pings != 2 {
		t.Errorf("StartContainer after a good ping = %v with %d pings, want no error, 2 pings", err, pings)
	}
}

func TestNewRefuses(t *testing.T) {
	for _, o := range []engine.Options{
		{Host: "ssh://user@host"},
		{Host: "npipe:////./pipe/docker_engine"},
		{Host: "unix://"},
		{Host: "tcp://:2375"},
		{Host: "tcp://[::1"},
		{APIVersion: "latest"},
	} {
		if _, err := engine.New(o); err == nil {
			t.Errorf("New(%+v): no error", o)
		}
	}
}

// TestTCPHost checks a tcp:// address with a base path: requests go to the path below it.
func TestTCPHost(t *testing.T) {
	rec := &recorder{t: t, status: 204}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	c, err := engine.New(engine.Options{Host: "tcp://" + srv.Listener.Addr().String() + "/proxy/", APIVersion: "1.41"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.KillContainer(t.Context(), "c", "KILL"); err != nil {
		t.Fatal(err)
	}
	if got := rec.requests()[0].Path; got != "/proxy/v1.41/containers/c/kill" {
		t.Errorf("path = %q, want /proxy/v1.41/containers/c/kill", got)
	}
}

// TestFromEnvTLS runs an engine that requires a client certificate, as a daemon started with
// --tlsverify does, and reaches it with DOCKER_CERT_PATH and DOCKER_TLS_VERIFY.
func TestFromEnvTLS(t *testing.T) {
	dir := t.TempDir()
	cert := writeCerts(t, dir)
	pool := x509.NewCertPool()
	pool.AddCert(cert.Leaf)
	rec := &recorder{t: t, status: 200, header: map[string]string{"API-Version": "1.41"}}
	srv := httptest.NewUnstartedServer(rec)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
	srv.StartTLS()
	t.Cleanup(srv.Close)

	env := map[string]string{
		"DOCKER_HOST":       "tcp://" + srv.Listener.Addr().String(),
		"DOCKER_CERT_PATH":  dir,
		"DOCKER_TLS_VERIFY": "1",
	}
	c, err := engine.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("FromEnv: %v", err)
	}
	if v, err := c.Ping(t.Context()); err != nil || v != "1.41" {
		t.Errorf("Ping over TLS = %q, %v; want 1.41", v, err)
	}

	env["DOCKER_CERT_PATH"] = t.TempDir() // no certificates there
	if _, err := engine.FromEnv(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "DOCKER_CERT_PATH") {
		t.Errorf("FromEnv with an empty DOCKER_CERT_PATH = %v, want an error naming it", err)
	}
}

// writeCerts writes ca.pem, cert.pem and key.pem to dir: one self-signed certificate for
// 127.0.0.1 that serves as the CA, the engine's certificate and the client's.
func writeCerts(t *testing.T, dir string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "engine"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	for name, data := range map[string][]byte{"ca.pem": certPEM, "cert.pem": certPEM, "key.pem": keyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}
