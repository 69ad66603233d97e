package testsuite

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Certs are the PEM files of a throwaway PKI for TLS tests: a CA, a server
// certificate it signed for 127.0.0.1 and localhost, and a client
// certificate it signed. Key files are 0600.
type Certs struct {
	CA                    string // the CA's certificate
	ServerCert, ServerKey string
	ClientCert, ClientKey string
}

// NewCerts writes a new CA and the server and client certificates it
// signs into dir, their names starting with prefix.
func NewCerts(dir, prefix string) (Certs, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Certs{}, err
	}
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: prefix + " test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return Certs{}, fmt.Errorf("CA certificate: %w", err)
	}
	if ca, err = x509.ParseCertificate(caDER); err != nil {
		return Certs{}, err
	}
	c := Certs{CA: filepath.Join(dir, prefix+"-ca.pem")}
	if err := writePEM(c.CA, "CERTIFICATE", caDER, 0o644); err != nil {
		return Certs{}, err
	}
	server := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if c.ServerCert, c.ServerKey, err = signed(dir, prefix+"-server", server, ca, caKey); err != nil {
		return Certs{}, err
	}
	client := &x509.Certificate{
		SerialNumber: big.NewInt(3),
		Subject:      pkix.Name{CommonName: prefix + " client"},
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if c.ClientCert, c.ClientKey, err = signed(dir, prefix+"-client", client, ca, caKey); err != nil {
		return Certs{}, err
	}
	return c, nil
}

// signed writes tmpl signed by ca (key caKey) and its new key as
// <dir>/<name>.pem and <dir>/<name>-key.pem.
func signed(dir, name string, tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey) (cert, key string, err error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
	if err != nil {
		return "", "", fmt.Errorf("%s certificate: %w", name, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return "", "", err
	}
	cert, key = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	if err := writePEM(cert, "CERTIFICATE", der, 0o644); err != nil {
		return "", "", err
	}
	return cert, key, writePEM(key, "EC PRIVATE KEY", keyDER, 0o600)
}

func writePEM(path, kind string, der []byte, mode os.FileMode) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), mode)
}
