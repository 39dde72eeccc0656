// Package tlsfilestest makes certificate authorities and the certificates they sign, as PEM
// files, for tests of the agents' TLS channel (crypto/x509, nothing external).
package tlsfilestest

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
	"testing"
	"time"
)

// CA is a certificate authority whose certificate is at CertFile.
type CA struct {
	t        testing.TB
	dir      string
	name     string
	cert     *x509.Certificate
	key      *ecdsa.PrivateKey
	CertFile string
}

// NewCA makes a CA named name, its files in a directory of the test's.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{SerialNumber: serial(t), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &CA{t: t, dir: t.TempDir(), name: name, cert: cert, key: key}
	ca.CertFile = filepath.Join(ca.dir, name+"-ca.pem")
	writePEM(t, ca.CertFile, "CERTIFICATE", der)
	return ca
}

// Pair is a certificate and its key, as files.
type Pair struct{ CertFile, KeyFile string }

// Server signs a server certificate for hosts (names or IP addresses), written as name.pem
// and name-key.pem.
func (ca *CA) Server(name string, hosts ...string) Pair {
	tmpl := ca.template(name, x509.ExtKeyUsageServerAuth)
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return ca.sign(name, tmpl)
}

// Client signs a client certificate for name.
func (ca *CA) Client(name string) Pair {
	return ca.sign(name, ca.template(name, x509.ExtKeyUsageClientAuth))
}

// Replace puts the files of src in place of dst's, each through a rename as a Secret update
// does, so a reader never sees half a file (a certificate rotation).
func Replace(t testing.TB, dst, src Pair) {
	t.Helper()
	for _, f := range [][2]string{{src.CertFile, dst.CertFile}, {src.KeyFile, dst.KeyFile}} {
		b, err := os.ReadFile(f[0])
		if err != nil {
			t.Fatal(err)
		}
		tmp := f[1] + ".tmp"
		if err := os.WriteFile(tmp, b, 0o600); err != nil { //nolint:gosec // G703: the test's own temporary directory
			t.Fatal(err)
		}
		if err := os.Rename(tmp, f[1]); err != nil {
			t.Fatal(err)
		}
	}
}

func (ca *CA) template(name string, usage x509.ExtKeyUsage) *x509.Certificate {
	return &x509.Certificate{SerialNumber: serial(ca.t), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
}

func (ca *CA) sign(name string, tmpl *x509.Certificate) Pair {
	key := newKey(ca.t)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		ca.t.Fatal(err)
	}
	p := Pair{CertFile: filepath.Join(ca.dir, name+".pem"), KeyFile: filepath.Join(ca.dir, name+"-key.pem")}
	writePEM(ca.t, p.CertFile, "CERTIFICATE", der)
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		ca.t.Fatal(err)
	}
	writePEM(ca.t, p.KeyFile, "PRIVATE KEY", kder)
	return p
}

// Serial returns the serial number of the certificate in file.
func Serial(t testing.TB, file string) *big.Int {
	t.Helper()
	b, err := os.ReadFile(file) //nolint:gosec // G304: a file this package wrote
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatalf("%s: no PEM block", file)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c.SerialNumber
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func serial(t testing.TB) *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func writePEM(t testing.TB, file, typ string, der []byte) {
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
