package deviceplugin_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// requireAPIServer skips a test that needs the apiserver when the package runs
// without one.
func requireAPIServer(t *testing.T) {
	t.Helper()
	if testenv.Environment() == nil {
		t.Skip("no kube-apiserver: KUBEBUILDER_ASSETS is not set")
	}
}

// proxy forwards TCP connections to the apiserver. Stopping it closes the listener
// and every connection, so to the plugin the apiserver is gone (connection refused)
// until it starts again on the same address.
type proxy struct {
	t      *testing.T
	addr   string
	target string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	p := &proxy{t: t, addr: "127.0.0.1:0", target: target}
	p.start()
	p.addr = p.ln.Addr().String()
	t.Cleanup(p.stop)
	return p
}

func (p *proxy) start() {
	p.t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatalf("proxy: %v", err)
	}
	p.mu.Lock()
	p.ln, p.conns = ln, map[net.Conn]bool{}
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
}

func (p *proxy) forward(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	if p.conns == nil {
		p.mu.Unlock()
		_, _ = c.Close(), up.Close()
		return
	}
	p.conns[c], p.conns[up] = true, true
	p.mu.Unlock()
	go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
	_, _ = io.Copy(c, up)
	_ = c.Close()
}

func (p *proxy) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

// kubeconfig writes a kubeconfig for the test apiserver's admin, reached at server,
// optionally acting as another user.
func kubeconfig(t *testing.T, server string, as *rest.ImpersonationConfig) string {
	t.Helper()
	cfg := testenv.Config()
	auth := &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken,
	}
	if as != nil {
		auth.Impersonate, auth.ImpersonateGroups, auth.ImpersonateUserExtra = as.UserName, as.Groups, as.Extra
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["test"] = auth
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "test"}
	kc.CurrentContext = "test"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// apiserverHostPort is the test apiserver's address.
func apiserverHostPort(t *testing.T) string {
	t.Helper()
	u, err := url.Parse(testenv.Config().Host)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// getNode reads a VmafxNode, or returns nil if there is none.
func getNode(t *testing.T, ns, name string) *vmafxv1.VmafxNode {
	t.Helper()
	var n vmafxv1.VmafxNode
	err := testenv.Client().Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &n)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return &n
}

// waitNode waits until the VmafxNode exists and ok says it is as wanted.
func waitNode(t *testing.T, ns, name string, what string, ok func(*vmafxv1.VmafxNode) bool) *vmafxv1.VmafxNode {
	t.Helper()
	var n *vmafxv1.VmafxNode
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		n = getNode(t, ns, name)
		return n != nil && ok(n), nil
	})
	if err != nil {
		t.Fatalf("VmafxNode %s/%s never %s; last seen: %+v", ns, name, what, n)
	}
	return n
}

// renewedAt returns the renewTime of the heartbeat Lease of VmafxNode ns/node, zero when
// there is none.
func renewedAt(t *testing.T, ns, node string) time.Time {
	t.Helper()
	name, _ := vmafxv1.NodeLeaseName(node)
	var l coordinationv1.Lease
	err := testenv.Client().Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &l)
	if apierrors.IsNotFound(err) {
		return time.Time{}
	}
	if err != nil {
		t.Fatal(err)
	}
	if l.Spec.RenewTime == nil {
		return time.Time{}
	}
	return l.Spec.RenewTime.Time
}

// waitRenewed waits until the heartbeat Lease of VmafxNode ns/node is renewed after after,
// and returns the renewal.
func waitRenewed(t *testing.T, ns, node string, after time.Time) time.Time {
	t.Helper()
	var at time.Time
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		at = renewedAt(t, ns, node)
		return at.After(after), nil
	})
	if err != nil {
		t.Fatalf("the heartbeat Lease of %s/%s was never renewed after %v; last renewed %v", ns, node, after, at)
	}
	return at
}

// applyFile creates every object of a YAML file with strict field validation, so an
// unknown or misspelt field fails the test; dryRun only validates. Created objects
// are deleted when the test ends.
func applyFile(t *testing.T, path string, dryRun bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := client.WithFieldValidation(testenv.Client(), metav1.FieldValidationStrict)
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		var opts []client.CreateOption
		if dryRun {
			opts = append(opts, client.DryRunAll)
		}
		if err := c.Create(context.Background(), &u, opts...); err != nil {
			t.Fatalf("%s: creating %s %s: %v", path, u.GetKind(), u.GetName(), err)
		}
		if !dryRun {
			t.Cleanup(func() { _ = testenv.Client().Delete(context.Background(), &u) })
		}
	}
}
