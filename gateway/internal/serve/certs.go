package serve

import (
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"time"
)

// certLoader serves the certificate of two files, reloading them when they change: a
// Secret mounted as a volume is updated in place by the kubelet when cert-manager renews it.
type certLoader struct {
	certFile, keyFile string

	mu      sync.Mutex
	cert    *tls.Certificate
	modTime time.Time
}

func newCertLoader(certFile, keyFile string) (*certLoader, error) {
	l := &certLoader{certFile: certFile, keyFile: keyFile}
	if _, err := l.get(nil); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *certLoader) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	st, err := os.Stat(l.certFile)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cert != nil && st.ModTime().Equal(l.modTime) {
		return l.cert, nil
	}
	c, err := tls.LoadX509KeyPair(l.certFile, l.keyFile)
	if err != nil {
		if l.cert != nil {
			// A renewal half written: keep serving the previous pair.
			return l.cert, nil
		}
		return nil, fmt.Errorf("TLS key pair %s, %s: %w", l.certFile, l.keyFile, err)
	}
	l.cert, l.modTime = &c, st.ModTime()
	return l.cert, nil
}
