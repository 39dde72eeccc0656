// Package tlsfiles builds the TLS configurations of the agents' gRPC stream from PEM files —
// the control plane's certificate and key, the agents' client certificates, the CAs each side
// trusts — and reads the files again when they change, so that a rotated certificate (a
// renewed Kubernetes Secret, cert-manager) takes effect on the next connection, without a
// restart.
//
// Files are read again at most once per CheckInterval, on a handshake, and loaded when their
// contents changed (contents, not modification times: a rotation within one clock tick of
// the file system leaves the time as it was). A file that changed but does not load (half written, a key that does not match) is reported to OnReload and the
// previous contents stay in use until it loads.
package tlsfiles

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// CheckInterval is how often, at most, the files are looked at for changes.
const CheckInterval = time.Second

// Options are what both sides share.
type Options struct {
	// OnReload is told about every file set that was loaded again after a change (err nil),
	// or failed to (err set; the previous one stays in use). Optional.
	OnReload func(what string, err error)
	// Now is the clock of CheckInterval. Default time.Now.
	Now func() time.Time
}

func (o *Options) defaults() {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.OnReload == nil {
		o.OnReload = func(string, error) {}
	}
}

// ServerConfig is the control plane's configuration: its certificate chain and key, and with
// clientCAFile set, mutual TLS — every client must present a certificate signed by one of
// those CAs.
func ServerConfig(certFile, keyFile, clientCAFile string, o Options) (*tls.Config, error) {
	o.defaults()
	kp, err := newKeyPair(certFile, keyFile, o)
	if err != nil {
		return nil, err
	}
	var cas *caPool
	if clientCAFile != "" {
		if cas, err = newCAPool(clientCAFile, o); err != nil {
			return nil, err
		}
	}
	base := &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"h2"}}
	base.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		c := &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"h2"}, Certificates: []tls.Certificate{kp.get()}}
		if cas != nil {
			c.ClientCAs, c.ClientAuth = cas.get(), tls.RequireAndVerifyClientCert
		}
		return c, nil
	}
	return base, nil
}

// ClientConfig is an agent's configuration: it verifies the control plane's certificate
// for serverName against the CAs in caFile (the system's when caFile is empty) and, with
// certFile and keyFile set, presents that client certificate.
func ClientConfig(caFile, certFile, keyFile, serverName string, o Options) (*tls.Config, error) {
	o.defaults()
	if serverName == "" {
		return nil, errors.New("tlsfiles: a server name to verify is required")
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: serverName}
	if (certFile == "") != (keyFile == "") {
		return nil, errors.New("tlsfiles: a client certificate needs both its certificate and its key file")
	}
	if certFile != "" {
		kp, err := newKeyPair(certFile, keyFile, o)
		if err != nil {
			return nil, err
		}
		c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			cert := kp.get()
			return &cert, nil
		}
	}
	if caFile == "" {
		return c, nil
	}
	cas, err := newCAPool(caFile, o)
	if err != nil {
		return nil, err
	}
	// The CAs may change while the process runs, so the chain is verified here, against the
	// current pool, instead of by crypto/tls against a pool fixed at start.
	c.InsecureSkipVerify = true
	c.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("tlsfiles: the server presented no certificate")
		}
		inter := x509.NewCertPool()
		for _, ic := range cs.PeerCertificates[1:] {
			inter.AddCert(ic)
		}
		_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{DNSName: serverName, Roots: cas.get(),
			Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
		return err
	}
	return c, nil
}

// watched is a set of files and when they were last looked at.
type watched struct {
	files     []string
	stamps    []stamp
	checked   time.Time
	what      string
	o         Options
	lastError string // of the last failed reload, so a bad file is reported once
}

// stamp is a file's contents, hashed.
type stamp [sha256.Size]byte

func (w *watched) stat() ([]stamp, error) {
	out := make([]stamp, len(w.files))
	for i, f := range w.files {
		b, err := os.ReadFile(f) //nolint:gosec // G304: a file the operator configured
		if err != nil {
			return nil, err
		}
		out[i] = sha256.Sum256(b)
	}
	return out, nil
}

// due reports whether the files should be loaded again: CheckInterval passed and they changed.
func (w *watched) due() ([]stamp, bool) {
	now := w.o.Now()
	if now.Sub(w.checked) < CheckInterval {
		return nil, false
	}
	w.checked = now
	s, err := w.stat()
	if err != nil {
		w.report(err)
		return nil, false
	}
	for i := range s {
		if s[i] != w.stamps[i] {
			return s, true
		}
	}
	return nil, false
}

func (w *watched) report(err error) {
	if err == nil {
		w.lastError = ""
		w.o.OnReload(w.what, nil)
		return
	}
	if err.Error() != w.lastError {
		w.lastError = err.Error()
		w.o.OnReload(w.what, err)
	}
}

// keyPair is a certificate chain and its key, reloaded when their files change.
type keyPair struct {
	mu   sync.Mutex
	w    watched
	cert tls.Certificate
}

func newKeyPair(certFile, keyFile string, o Options) (*keyPair, error) {
	kp := &keyPair{w: watched{files: []string{certFile, keyFile}, what: "certificate " + certFile, o: o}}
	var err error
	if kp.w.stamps, err = kp.w.stat(); err != nil {
		return nil, fmt.Errorf("tlsfiles: %w", err)
	}
	if kp.cert, err = tls.LoadX509KeyPair(certFile, keyFile); err != nil {
		return nil, fmt.Errorf("tlsfiles: certificate %s and key %s: %w", certFile, keyFile, err)
	}
	kp.w.checked = o.Now()
	return kp, nil
}

func (kp *keyPair) get() tls.Certificate {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	if s, ok := kp.w.due(); ok {
		cert, err := tls.LoadX509KeyPair(kp.w.files[0], kp.w.files[1])
		if err == nil {
			kp.cert, kp.w.stamps = cert, s
		}
		kp.w.report(err)
	}
	return kp.cert
}

// caPool is a PEM bundle of CA certificates, reloaded when its file changes.
type caPool struct {
	mu   sync.Mutex
	w    watched
	pool *x509.CertPool
}

func newCAPool(file string, o Options) (*caPool, error) {
	p := &caPool{w: watched{files: []string{file}, what: "CA bundle " + file, o: o}}
	var err error
	if p.w.stamps, err = p.w.stat(); err != nil {
		return nil, fmt.Errorf("tlsfiles: %w", err)
	}
	if p.pool, err = loadPool(file); err != nil {
		return nil, err
	}
	p.w.checked = o.Now()
	return p, nil
}

func (p *caPool) get() *x509.CertPool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.w.due(); ok {
		pool, err := loadPool(p.w.files[0])
		if err == nil {
			p.pool, p.w.stamps = pool, s
		}
		p.w.report(err)
	}
	return p.pool
}

func loadPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file) //nolint:gosec // G304: a file the operator configured
	if err != nil {
		return nil, fmt.Errorf("tlsfiles: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("tlsfiles: %s holds no PEM certificate", file)
	}
	return pool, nil
}
