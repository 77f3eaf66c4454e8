package cluster

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// Config is what the harness is told; everything else derives from it.
type Config struct {
	// StateDir holds all of the cluster's state (.cluster at the repository root).
	StateDir string
	// RepoRoot is the project's work tree, where `images` builds the binaries.
	RepoRoot string
	// BinDir holds the binaries built from module sources, named <name>-<version>.
	BinDir            string
	K8sVersion        string
	EtcdVersion       string
	ContainerdVersion string
	// ImagesDir receives the image archives.
	ImagesDir string
	// NodeIP is the address the kubelet and kube-apiserver serve on; empty picks this
	// machine's first non-loopback IPv4 address.
	NodeIP string
	// NodeName is the node's name; empty is the host name, lower-cased.
	NodeName string
}

// Fixed network layout. The pod range is the one the CNI bridge hands out (one node, so
// the whole range is the node's); the service range holds the kubernetes Service's
// ClusterIP (its first address) that kube-proxy maps to kube-apiserver.
const (
	PodCIDR       = "10.244.0.0/16"
	ServiceCIDR   = "10.96.0.0/16"
	KubernetesSvc = "10.96.0.1"
	ClusterDomain = "cluster.local"
	BridgeName    = "cni0"
)

// Ports. kube-apiserver and the kubelet serve on the node address (pods and the
// apiserver must reach them there); everything else serves on 127.0.0.1 only.
const (
	APIServerPort         = 6443
	KubeletPort           = 10250
	KubeletHealthzPort    = 10248
	EtcdClientPort        = 2379
	EtcdPeerPort          = 2380
	ControllerManagerPort = 10257
	SchedulerPort         = 10259
	KubeProxyHealthzPort  = 10256
	KubeProxyMetricsPort  = 10249
)

// Image names of the locally built images.
const (
	ImageRegistry = "vmafx.local"
	ImageTag      = "dev"
	PauseImage    = ImageRegistry + "/pause:" + ImageTag
)

// Binary names, as found in BinDir with a version suffix.
const (
	binEtcd              = "etcd"
	binAPIServer         = "kube-apiserver"
	binControllerManager = "kube-controller-manager"
	binScheduler         = "kube-scheduler"
	binKubelet           = "kubelet"
	binKubeProxy         = "kube-proxy"
	binKubectl           = "kubectl"
	binContainerd        = "containerd"
	binShim              = "containerd-shim-runc-v2"
	binCtr               = "ctr"
)

// Binary returns the path of a built binary.
func (c Config) Binary(name string) string {
	v := c.K8sVersion
	switch name {
	case binEtcd:
		v = c.EtcdVersion
	case binContainerd, binShim, binCtr:
		v = c.ContainerdVersion
	}
	return filepath.Join(c.BinDir, name+"-"+v)
}

// Kubectl is the path of the kubectl built from module sources.
func (c Config) Kubectl() string { return c.Binary(binKubectl) }

func (c Config) validate() error {
	var errs []error
	for name, v := range map[string]string{"state dir": c.StateDir, "bin dir": c.BinDir, "kubernetes version": c.K8sVersion, "etcd version": c.EtcdVersion, "containerd version": c.ContainerdVersion} {
		if v == "" {
			errs = append(errs, fmt.Errorf("%s is not set", name))
		}
	}
	if c.StateDir != "" && !filepath.IsAbs(c.StateDir) {
		errs = append(errs, fmt.Errorf("state dir %q is not absolute", c.StateDir))
	}
	return errors.Join(errs...)
}

// Layout names the files and folders inside the state folder.
type Layout struct{ Root string }

func (l Layout) path(elem ...string) string {
	return filepath.Join(append([]string{l.Root}, elem...)...)
}

// StateFile records what Up found and did, for Down.
func (l Layout) StateFile() string { return l.path("cluster.json") }

// Kubeconfig is the cluster administrator's kubeconfig, for the user.
func (l Layout) Kubeconfig() string { return l.path("kubeconfig") }

// ComponentKubeconfig is the kubeconfig a component authenticates with.
func (l Layout) ComponentKubeconfig(name string) string {
	return l.path("kubeconfigs", name+".kubeconfig")
}

// PKI holds the CA, every key pair and the service account key.
func (l Layout) PKI() string { return l.path("pki") }

// Procs holds a record per started process.
func (l Layout) Procs() string { return l.path("run") }

// Logs holds each component's log.
func (l Layout) Logs() string { return l.path("logs") }

// Log is one component's log file.
func (l Layout) Log(name string) string { return l.path("logs", name+".log") }

// Etcd is etcd's data folder.
func (l Layout) Etcd() string { return l.path("etcd") }

// Containerd holds containerd's config, root, state and socket.
func (l Layout) Containerd() string { return l.path("containerd") }

// RegistryHosts is containerd's registry config_path: a folder per registry host holding
// its hosts.toml (RegistryHTTP writes them), inside the state folder, never /etc.
func (l Layout) RegistryHosts() string { return l.path("containerd", "certs.d") }

// ContainerdSocket is containerd's gRPC socket.
func (l Layout) ContainerdSocket() string { return l.path("containerd", "containerd.sock") }

// ShimSocketDir holds the shims' sockets when the path is short enough (a unix socket
// path has at most 107 bytes; the shim adds a 64-character hash); else containerd uses
// its default, /run/containerd/s, which Down removes.
func (l Layout) ShimSocketDir() string {
	d := l.path("containerd", "s")
	if len(d)+1+64 > 107 {
		return ""
	}
	return d
}

// CNIConfDir holds the CNI network config.
func (l Layout) CNIConfDir() string { return l.path("cni", "net.d") }

// CNIIPAMDir holds the host-local IPAM plugin's allocations.
func (l Layout) CNIIPAMDir() string { return l.path("cni", "ipam") }

// KubeletDir is the kubelet's root folder, bind-mounted on /var/lib/kubelet.
func (l Layout) KubeletDir() string { return l.path("kubelet") }

// PodLogs is the kubelet's pod log folder.
func (l Layout) PodLogs() string { return l.path("pod-logs") }

// Config is the folder of the rendered component configs.
func (l Layout) Config() string { return l.path("config") }

// Bin holds links to the binaries under their plain names, first in containerd's PATH so
// that it finds its shim.
func (l Layout) Bin() string { return l.path("bin") }

// Artifacts holds the folders Collect writes; Down keeps it.
func (l Layout) Artifacts() string { return l.path("artifacts") }

// KubeletRoot is where the kubelet's root folder must appear: the device plugin socket
// folder (/var/lib/kubelet/device-plugins) and the PodResources socket that our device
// plugin's DaemonSet mounts are fixed below it.
const KubeletRoot = "/var/lib/kubelet"

// DetectNodeIP returns this machine's first up, non-loopback interface's IPv4 address,
// skipping the cluster's own bridge and veths.
func DetectNodeIP() (string, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return "", err
	}
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 || ifc.Name == BridgeName || strings.HasPrefix(ifc.Name, "veth") {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && ipn.IP.IsGlobalUnicast() {
				return ipn.IP.String(), nil
			}
		}
	}
	return "", errors.New("no non-loopback IPv4 address on this machine; set -node-ip")
}

// DetectNodeName is the host name, lower-cased, as the kubelet would register it.
func DetectNodeName() (string, error) {
	h, err := os.Hostname()
	if err != nil {
		return "", err
	}
	return strings.ToLower(h), nil
}
