package controlplane

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

// pkiFiles are the paths of the CA and of the API server's serving pair.
type pkiFiles struct {
	caCert, caKey         string
	serverCert, serverKey string
}

// writePKI makes a CA and a serving certificate for the API server signed by
// it, valid for the names clients use (127.0.0.1, the kubernetes Service's
// first ClusterIP and DNS names), writes them under Dir and sets CAData.
func (p *Plane) writePKI() (pkiFiles, error) {
	files := pkiFiles{
		caCert: filepath.Join(p.Dir, "ca.crt"), caKey: filepath.Join(p.Dir, "ca.key"),
		serverCert: filepath.Join(p.Dir, "apiserver.crt"), serverKey: filepath.Join(p.Dir, "apiserver.key"),
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return files, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "nodestate-test-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true, IsCA: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return files, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return files, err
	}
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return files, err
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local"},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		return files, err
	}
	caKeyDER, err := x509.MarshalECPrivateKey(caKey)
	if err != nil {
		return files, err
	}
	srvKeyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		return files, err
	}
	p.CAData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	for path, block := range map[string]*pem.Block{
		files.caCert:     {Type: "CERTIFICATE", Bytes: caDER},
		files.caKey:      {Type: "EC PRIVATE KEY", Bytes: caKeyDER},
		files.serverCert: {Type: "CERTIFICATE", Bytes: srvDER},
		files.serverKey:  {Type: "EC PRIVATE KEY", Bytes: srvKeyDER},
	} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			return files, err
		}
	}
	return files, nil
}
