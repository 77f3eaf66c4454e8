package pki

import (
	"crypto/x509"
	"encoding/pem"
	"net"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestIssue checks that issued certificates verify against the CA for the usages and
// names asked for, and carry the user and groups Kubernetes reads from them.
func TestIssue(t *testing.T) {
	ca, err := NewCA("vmafx-local-ca")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := ca.Write(dir, "ca"); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadCA(dir, "ca")
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(loaded.Cert)

	tests := []struct {
		name    string
		req     Request
		usage   x509.ExtKeyUsage
		dnsName string
		wantErr bool
	}{
		{
			name:    "server by IP",
			req:     Request{CommonName: "kube-apiserver", IPs: []net.IP{net.ParseIP("192.0.2.2")}, DNSNames: []string{"kubernetes.default.svc"}, Server: true},
			usage:   x509.ExtKeyUsageServerAuth,
			dnsName: "192.0.2.2",
		},
		{
			name:    "server by name",
			req:     Request{CommonName: "kube-apiserver", DNSNames: []string{"kubernetes.default.svc"}, Server: true},
			usage:   x509.ExtKeyUsageServerAuth,
			dnsName: "kubernetes.default.svc",
		},
		{
			name:  "node client",
			req:   Request{CommonName: "system:node:vm", Organizations: []string{"system:nodes"}, Client: true},
			usage: x509.ExtKeyUsageClientAuth,
		},
		{
			name:    "client certificate used as a server",
			req:     Request{CommonName: "admin", Client: true},
			usage:   x509.ExtKeyUsageServerAuth,
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kp, err := loaded.Issue(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			block, _ := pem.Decode(kp.CertPEM)
			cert, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			_, err = cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: tt.dnsName, KeyUsages: []x509.ExtKeyUsage{tt.usage}})
			if (err != nil) != tt.wantErr {
				t.Fatalf("Verify error = %v, want error %v", err, tt.wantErr)
			}
			got := []string{cert.Subject.CommonName}
			got = append(got, cert.Subject.Organization...)
			want := append([]string{tt.req.CommonName}, tt.req.Organizations...)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("subject (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIssueNeedsAUsage(t *testing.T) {
	ca, err := NewCA("ca")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ca.Issue(Request{CommonName: "nobody"}); err == nil {
		t.Error("Issue without server or client usage succeeded")
	}
}
