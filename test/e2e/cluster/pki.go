package cluster

import (
	"fmt"
	"net"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/vmafx/vmafx/test/e2e/internal/pki"
)

// identity is a client certificate's user and groups, and the kubeconfig it goes into.
type identity struct {
	name   string // file name
	user   string
	groups []string
}

// The identities. The control plane's names are the ones the apiserver's bootstrap RBAC
// policy binds (system:kube-controller-manager, system:kube-scheduler, system:kube-proxy
// to system:node-proxier); the kubelet's is what the Node authorizer and NodeRestriction
// admission expect.
func identities(nodeName string) []identity {
	return []identity{
		{name: "admin", user: "vmafx-admin", groups: []string{"system:masters"}},
		{name: binControllerManager, user: "system:kube-controller-manager"},
		{name: binScheduler, user: "system:kube-scheduler"},
		{name: binKubeProxy, user: "system:kube-proxy"},
		{name: binKubelet, user: "system:node:" + nodeName, groups: []string{"system:nodes"}},
	}
}

// writePKI makes the CA and every key pair and kubeconfig, unless the CA exists already
// (a cluster that is up keeps its certificates).
func writePKI(l Layout, nodeIP, nodeName string) error {
	dir := l.PKI()
	if _, err := os.Stat(filepath.Join(dir, "ca.crt")); err == nil {
		return nil
	}
	ca, err := pki.NewCA("vmafx-local-cluster-ca")
	if err != nil {
		return err
	}
	ip := net.ParseIP(nodeIP)
	if ip == nil {
		return fmt.Errorf("node IP %q is not an IP address", nodeIP)
	}
	servers := []struct {
		name string
		req  pki.Request
	}{
		{"kube-apiserver", pki.Request{
			CommonName: "kube-apiserver", Server: true,
			IPs: []net.IP{ip, net.ParseIP(KubernetesSvc), net.ParseIP("127.0.0.1")},
			DNSNames: []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc",
				"kubernetes.default.svc." + ClusterDomain, "localhost", nodeName},
		}},
		{"kubelet-serving", pki.Request{CommonName: "system:node:" + nodeName, Organizations: []string{"system:nodes"}, Server: true, IPs: []net.IP{ip}, DNSNames: []string{nodeName}}},
		// kube-apiserver's client identity towards the kubelet (logs, exec, port-forward).
		{"kube-apiserver-kubelet-client", pki.Request{CommonName: "kube-apiserver-kubelet-client", Organizations: []string{"system:masters"}, Client: true}},
	}
	for _, s := range servers {
		kp, err := ca.Issue(s.req)
		if err != nil {
			return err
		}
		if err := kp.Write(dir, s.name); err != nil {
			return err
		}
	}
	priv, pub, err := pki.ServiceAccountKey()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "sa.key"), priv, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "sa.pub"), pub, 0o644); err != nil {
		return err
	}
	server := fmt.Sprintf("https://%s", net.JoinHostPort(nodeIP, fmt.Sprint(APIServerPort)))
	for _, id := range identities(nodeName) {
		kp, err := ca.Issue(pki.Request{CommonName: id.user, Organizations: id.groups, Client: true})
		if err != nil {
			return err
		}
		if err := kp.Write(dir, id.name); err != nil {
			return err
		}
		path := l.ComponentKubeconfig(id.name)
		if id.name == "admin" {
			path = l.Kubeconfig()
		}
		if err := writeKubeconfig(path, server, ca.CertPEM(), kp, id.user); err != nil {
			return err
		}
	}
	// The CA last: its presence means the PKI is complete.
	return ca.Write(dir, "ca")
}

// writeKubeconfig writes a kubeconfig with everything embedded, so that it works from any
// working directory and can be copied.
func writeKubeconfig(path, server string, caPEM []byte, kp pki.KeyPair, user string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	const name = "vmafx-local"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: kp.CertPEM, ClientKeyData: kp.KeyPEM}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: user, Namespace: "default"}
	cfg.CurrentContext = name
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return err
	}
	return os.Chmod(path, 0o600)
}
