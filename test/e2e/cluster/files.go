package cluster

import (
	"bytes"
	"fmt"
	"text/template"
)

// renderData feeds the config templates.
type renderData struct {
	L        Layout
	NodeIP   string
	NodeName string
	Pause    string
	PodCIDR  string
	CNIBin   string
	Runc     string
	Ports    map[string]int
	DNSConf  string
}

func newRenderData(l Layout, nodeIP, nodeName string) renderData {
	return renderData{
		L: l, NodeIP: nodeIP, NodeName: nodeName, Pause: PauseImage, PodCIDR: PodCIDR,
		CNIBin: cniBinDir, Runc: runcPath, DNSConf: "/etc/resolv.conf",
		Ports: map[string]int{
			"kubelet": KubeletPort, "kubeletHealthz": KubeletHealthzPort,
			"proxyHealthz": KubeProxyHealthzPort, "proxyMetrics": KubeProxyMetricsPort,
		},
	}
}

// Debian's runc and CNI plugins (packages runc and containernetworking-plugins).
const (
	runcPath  = "/usr/sbin/runc"
	cniBinDir = "/usr/lib/cni"
)

func render(name, text string, d renderData) ([]byte, error) {
	t, err := template.New(name).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, d); err != nil {
		return nil, fmt.Errorf("render %s: %w", name, err)
	}
	return b.Bytes(), nil
}

// containerdConfig keeps containerd's every path inside the state folder (root, state,
// sockets, runc's state, network namespaces, the opt folder) and reads no host config.
// restrict_oom_score_adj: root here lacks CAP_SYS_RESOURCE, so runc cannot lower a
// sandbox's oom_score_adj to the -998 the kubelet asks for and every sandbox would fail
// with "can't get final child's PID from pipe: EOF"; this caps requests at containerd's
// own value instead. The sandbox image is the locally built pause (no registry here),
// pinned so that image garbage collection keeps it. Registries are configured per host
// under config_path (RegistryHTTP), read at every pull, so no restart is needed.
const containerdConfig = `version = 3
root = '{{.L.Containerd}}/root'
state = '{{.L.Containerd}}/state'
imports = []
disabled_plugins = [
  'io.containerd.nri.v1.nri',
  'io.containerd.snapshotter.v1.blockfile',
  'io.containerd.snapshotter.v1.erofs',
  'io.containerd.differ.v1.erofs',
  'io.containerd.mount-handler.v1.erofs',
  'io.containerd.tracing.processor.v1.otlp',
  'io.containerd.internal.v1.tracing',
]

[grpc]
  address = '{{.L.ContainerdSocket}}'

[ttrpc]
  address = '{{.L.ContainerdSocket}}.ttrpc'

[plugins]
  [plugins.'io.containerd.internal.v1.opt']
    path = '{{.L.Containerd}}/opt'

  [plugins.'io.containerd.shim.v1.manager']
    socket_dir = '{{.L.ShimSocketDir}}'

  [plugins.'io.containerd.cri.v1.images']
    snapshotter = 'overlayfs'
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = '{{.Pause}}'
    [plugins.'io.containerd.cri.v1.images'.registry]
      config_path = '{{.L.RegistryHosts}}'

  [plugins.'io.containerd.cri.v1.runtime']
    restrict_oom_score_adj = true
    netns_mounts_under_state_dir = true
    cdi_spec_dirs = []
    enable_unprivileged_ports = true
    enable_unprivileged_icmp = true
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = 'runc'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = 'io.containerd.runc.v2'
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          BinaryName = '{{.Runc}}'
          Root = '{{.L.Containerd}}/runc'
          SystemdCgroup = false
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = ['{{.CNIBin}}']
      conf_dir = '{{.L.CNIConfDir}}'
      max_conf_num = 1

  [plugins.'io.containerd.grpc.v1.cri']
    stream_server_address = '127.0.0.1'
    stream_server_port = '0'
`

// cniConfig is the pod network: one bridge with the whole pod range (one node), host-local
// addresses kept in the state folder, no masquerading (pods reach nothing beyond this
// machine anyway: the guard's FORWARD rules drop it), hairpin so that a pod reaches
// itself through a Service, and portmap for hostPort.
const cniConfig = `{
  "cniVersion": "1.0.0",
  "name": "vmafx",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "` + BridgeName + `",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "{{.L.CNIIPAMDir}}",
        "ranges": [[{"subnet": "{{.PodCIDR}}"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`

// kubeletConfig: failCgroupV1 false because this machine has cgroup v1 (kubelet 1.37
// refuses it otherwise), cgroupfs because there is no systemd, failSwapOn false for
// machines with swap. The kubelet serves on the node address with a certificate from the
// cluster CA and authenticates kube-apiserver by its client certificate; healthz on
// 127.0.0.1. No cluster DNS (docs/local-cluster.md says why): pods get the host's
// resolv.conf. Eviction thresholds are low so that a busy shared disk does not evict the
// project's pods in the middle of a test.
const kubeletConfig = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
failSwapOn: false
containerRuntimeEndpoint: unix://{{.L.ContainerdSocket}}
imageServiceEndpoint: unix://{{.L.ContainerdSocket}}
address: {{.NodeIP}}
port: {{index .Ports "kubelet"}}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: {{index .Ports "kubeletHealthz"}}
tlsCertFile: {{.L.PKI}}/kubelet-serving.crt
tlsPrivateKeyFile: {{.L.PKI}}/kubelet-serving.key
rotateCertificates: false
serverTLSBootstrap: false
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: {{.L.PKI}}/ca.crt
authorization:
  mode: Webhook
clusterDomain: ` + ClusterDomain + `
resolvConf: {{.DNSConf}}
podLogsDir: {{.L.PodLogs}}
protectKernelDefaults: false
evictionHard:
  memory.available: 100Mi
  nodefs.available: 2%
  imagefs.available: 2%
  nodefs.inodesFree: 2%
imageGCHighThresholdPercent: 98
imageGCLowThresholdPercent: 95
maxPods: 110
`

// kubeProxyConfig: iptables mode (the kubelet already uses iptables here), conntrack and
// route_localnet left as they are (zero means "do not touch"), metrics and health on
// 127.0.0.1, NodePorts only on the node address.
const kubeProxyConfig = `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: {{.L.ComponentKubeconfigProxy}}
hostnameOverride: {{.NodeName}}
mode: iptables
clusterCIDR: {{.PodCIDR}}
healthzBindAddress: 127.0.0.1:{{index .Ports "proxyHealthz"}}
metricsBindAddress: 127.0.0.1:{{index .Ports "proxyMetrics"}}
nodePortAddresses: ["{{.NodeIP}}/32"]
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
iptables:
  localhostNodePorts: false
  masqueradeAll: false
`

// ComponentKubeconfigProxy is kube-proxy's kubeconfig path, for the template.
func (l Layout) ComponentKubeconfigProxy() string { return l.ComponentKubeconfig(binKubeProxy) }
