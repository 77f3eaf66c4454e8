package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/vmafx/vmafx/test/e2e/internal/sandbox"
)

// component is one host process of the cluster.
type component struct {
	name string
	// args returns the command line (without the program).
	args func(c *run) []string
	// env returns the environment; nil inherits the harness's.
	env func(c *run) []string
	// ready returns nil once the component serves.
	ready func(ctx context.Context, c *run) error
	// readyTimeout bounds the wait for ready after a start.
	readyTimeout time.Duration
	// stopGrace is how long Stop waits after SIGTERM before SIGKILL.
	stopGrace time.Duration
}

// components in start order. Stop order is the reverse, except that Down stops the
// kubelet first of all (so that it restarts nothing) and removes the sandboxes before it
// stops containerd.
func components() []component {
	return []component{
		{
			name: binEtcd,
			args: func(c *run) []string {
				client := fmt.Sprintf("http://127.0.0.1:%d", EtcdClientPort)
				peer := fmt.Sprintf("http://127.0.0.1:%d", EtcdPeerPort)
				return []string{
					"--name=vmafx", "--data-dir=" + c.l.Etcd(),
					"--listen-client-urls=" + client, "--advertise-client-urls=" + client,
					"--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
					"--initial-cluster=vmafx=" + peer,
				}
			},
			ready: func(ctx context.Context, c *run) error {
				return httpOK(ctx, plainHTTP, fmt.Sprintf("http://127.0.0.1:%d/health", EtcdClientPort))
			},
			readyTimeout: 60 * time.Second,
			stopGrace:    15 * time.Second,
		},
		{
			name: binAPIServer,
			args: func(c *run) []string {
				p := c.l.PKI()
				return []string{
					"--advertise-address=" + c.st.NodeIP,
					"--bind-address=" + c.st.NodeIP,
					"--secure-port=" + strconv.Itoa(APIServerPort),
					"--etcd-servers=" + fmt.Sprintf("http://127.0.0.1:%d", EtcdClientPort),
					"--service-cluster-ip-range=" + ServiceCIDR,
					"--cert-dir=" + filepath.Join(p, "kube-apiserver"),
					"--tls-cert-file=" + filepath.Join(p, "kube-apiserver.crt"),
					"--tls-private-key-file=" + filepath.Join(p, "kube-apiserver.key"),
					"--client-ca-file=" + filepath.Join(p, "ca.crt"),
					"--kubelet-client-certificate=" + filepath.Join(p, "kube-apiserver-kubelet-client.crt"),
					"--kubelet-client-key=" + filepath.Join(p, "kube-apiserver-kubelet-client.key"),
					"--kubelet-certificate-authority=" + filepath.Join(p, "ca.crt"),
					// The host name maps to 127.0.0.1 in /etc/hosts, where the kubelet does
					// not serve: dial the node address, or `kubectl logs` fails.
					"--kubelet-preferred-address-types=InternalIP,Hostname",
					"--service-account-key-file=" + filepath.Join(p, "sa.pub"),
					"--service-account-signing-key-file=" + filepath.Join(p, "sa.key"),
					"--service-account-issuer=https://kubernetes.default.svc." + ClusterDomain,
					"--authorization-mode=Node,RBAC",
					"--enable-admission-plugins=NodeRestriction",
					"--allow-privileged=true",
					"--profiling=false",
				}
			},
			ready: func(ctx context.Context, c *run) error {
				return httpOK(ctx, c.adminHTTP, fmt.Sprintf("https://%s/readyz", net.JoinHostPort(c.st.NodeIP, strconv.Itoa(APIServerPort))))
			},
			readyTimeout: 120 * time.Second,
			// It once took about 45 s to exit after SIGTERM on this machine kind.
			stopGrace: 60 * time.Second,
		},
		{
			name: binControllerManager,
			args: func(c *run) []string {
				p := c.l.PKI()
				kc := c.l.ComponentKubeconfig(binControllerManager)
				return []string{
					"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
					"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(ControllerManagerPort),
					"--cert-dir=" + filepath.Join(p, binControllerManager),
					"--leader-elect=false",
					"--use-service-account-credentials=true",
					"--service-account-private-key-file=" + filepath.Join(p, "sa.key"),
					"--root-ca-file=" + filepath.Join(p, "ca.crt"),
					"--cluster-signing-cert-file=" + filepath.Join(p, "ca.crt"),
					"--cluster-signing-key-file=" + filepath.Join(p, "ca.key"),
					"--service-cluster-ip-range=" + ServiceCIDR,
				}
			},
			ready: func(ctx context.Context, c *run) error {
				return httpOK(ctx, insecureLocalHTTP, fmt.Sprintf("https://127.0.0.1:%d/healthz", ControllerManagerPort))
			},
			readyTimeout: 60 * time.Second,
			stopGrace:    15 * time.Second,
		},
		{
			name: binScheduler,
			args: func(c *run) []string {
				kc := c.l.ComponentKubeconfig(binScheduler)
				return []string{
					"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
					"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(SchedulerPort),
					"--leader-elect=false",
				}
			},
			ready: func(ctx context.Context, c *run) error {
				return httpOK(ctx, insecureLocalHTTP, fmt.Sprintf("https://127.0.0.1:%d/healthz", SchedulerPort))
			},
			readyTimeout: 60 * time.Second,
			stopGrace:    15 * time.Second,
		},
		{
			name: binContainerd,
			args: func(c *run) []string {
				return []string{"--config=" + filepath.Join(c.l.Config(), "containerd.toml")}
			},
			env: func(c *run) []string { return c.env() },
			ready: func(ctx context.Context, c *run) error {
				cl, err := sandbox.Dial(c.l.ContainerdSocket())
				if err != nil {
					return err
				}
				defer cl.Close()
				ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				defer cancel()
				return cl.Ready(ctx)
			},
			readyTimeout: 60 * time.Second,
			stopGrace:    15 * time.Second,
		},
		{
			name: binKubelet,
			args: func(c *run) []string {
				return []string{
					"--config=" + filepath.Join(c.l.Config(), "kubelet.yaml"),
					"--kubeconfig=" + c.l.ComponentKubeconfig(binKubelet),
					"--root-dir=" + KubeletRoot,
					"--node-ip=" + c.st.NodeIP,
					"--hostname-override=" + c.st.NodeName,
					"--v=2",
				}
			},
			env: func(c *run) []string { return c.env() },
			ready: func(ctx context.Context, c *run) error {
				return httpOK(ctx, plainHTTP, fmt.Sprintf("http://127.0.0.1:%d/healthz", KubeletHealthzPort))
			},
			readyTimeout: 90 * time.Second,
			stopGrace:    20 * time.Second,
		},
		{
			name: binKubeProxy,
			args: func(c *run) []string {
				return []string{"--config=" + filepath.Join(c.l.Config(), "kube-proxy.yaml"), "--v=2"}
			},
			env: func(c *run) []string { return c.env() },
			ready: func(ctx context.Context, c *run) error {
				return httpOK(ctx, plainHTTP, fmt.Sprintf("http://127.0.0.1:%d/livez", KubeProxyHealthzPort))
			},
			readyTimeout: 60 * time.Second,
			stopGrace:    15 * time.Second,
		},
	}
}

// env is the environment of the node's daemons: containerd finds its shim, and the
// kubelet and kube-proxy find iptables, through PATH.
func (c *run) env() []string {
	path := c.l.Bin() + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	out := []string{"PATH=" + path}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") {
			out = append(out, kv)
		}
	}
	return out
}

var (
	plainHTTP = &http.Client{Timeout: 3 * time.Second}
	// insecureLocalHTTP checks the health of components on 127.0.0.1 that serve with a
	// certificate they made themselves.
	insecureLocalHTTP = &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // health checks of loopback servers only
	}}
)

// adminClient returns an HTTP client that trusts the cluster CA and presents the admin
// certificate.
func adminHTTPClient(l Layout) (*http.Client, error) {
	caPEM, err := os.ReadFile(filepath.Join(l.PKI(), "ca.crt"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("cluster CA is not PEM")
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(l.PKI(), "admin.crt"), filepath.Join(l.PKI(), "admin.key"))
	if err != nil {
		return nil, err
	}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
	}}, nil
}

func httpOK(ctx context.Context, cl *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := cl.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}
