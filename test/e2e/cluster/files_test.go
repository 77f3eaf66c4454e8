package cluster

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

func testRenderData() renderData {
	return newRenderData(Layout{Root: "/work/main/.cluster"}, "192.0.2.2", "vm")
}

// TestKubeletConfig decodes the rendered KubeletConfiguration strictly (a misspelt field
// fails here rather than in the kubelet) and checks the settings this machine kind needs.
func TestKubeletConfig(t *testing.T) {
	data, err := render("kubelet", kubeletConfig, testRenderData())
	if err != nil {
		t.Fatal(err)
	}
	var cfg kubeletv1beta1.KubeletConfiguration
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		t.Fatalf("rendered kubelet config does not decode strictly: %v\n%s", err, data)
	}
	type settings struct {
		FailCgroupV1, FailSwapOn             *bool
		CgroupDriver, Address, Runtime, Logs string
		ClientCA                             string
		Anonymous                            *bool
		AuthzMode                            kubeletv1beta1.KubeletAuthorizationMode
		ReadOnlyPort                         int32
	}
	got := settings{
		FailCgroupV1: cfg.FailCgroupV1, FailSwapOn: cfg.FailSwapOn,
		CgroupDriver: cfg.CgroupDriver, Address: cfg.Address, Runtime: cfg.ContainerRuntimeEndpoint, Logs: cfg.PodLogsDir,
		ClientCA: cfg.Authentication.X509.ClientCAFile, Anonymous: cfg.Authentication.Anonymous.Enabled,
		AuthzMode: cfg.Authorization.Mode, ReadOnlyPort: cfg.ReadOnlyPort,
	}
	want := settings{
		FailCgroupV1: ptr.To(false), FailSwapOn: ptr.To(false),
		CgroupDriver: "cgroupfs", Address: "192.0.2.2", Runtime: "unix:///work/main/.cluster/containerd/containerd.sock",
		Logs:     "/work/main/.cluster/pod-logs",
		ClientCA: "/work/main/.cluster/pki/ca.crt", Anonymous: ptr.To(false),
		AuthzMode: kubeletv1beta1.KubeletAuthorizationModeWebhook, ReadOnlyPort: 0,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kubelet settings (-want +got):\n%s", diff)
	}
}

// TestContainerdConfig checks the settings without which sandboxes fail on this machine
// kind, and that every path containerd writes is inside the state folder.
func TestContainerdConfig(t *testing.T) {
	data, err := render("containerd", containerdConfig, testRenderData())
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, want := range []string{
		"restrict_oom_score_adj = true",
		"config_path = '" + testRenderData().L.RegistryHosts() + "'",
		"sandbox = '" + PauseImage + "'",
		"netns_mounts_under_state_dir = true",
		"SystemdCgroup = false",
		"BinaryName = '/usr/sbin/runc'",
		"bin_dirs = ['/usr/lib/cni']",
		"'io.containerd.nri.v1.nri',",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("containerd config lacks %q", want)
		}
	}
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " = ")
		if !ok || !strings.HasPrefix(v, "'/") {
			continue
		}
		path := strings.Trim(v, "'")
		if !strings.HasPrefix(path, "/work/main/.cluster/") && path != runcPath && path != cniBinDir {
			t.Errorf("%s = %s is outside the state folder", k, path)
		}
	}
}

func TestCNIConfig(t *testing.T) {
	data, err := render("cni", cniConfig, testRenderData())
	if err != nil {
		t.Fatal(err)
	}
	var conf struct {
		Name    string `json:"name"`
		Plugins []struct {
			Type   string `json:"type"`
			Bridge string `json:"bridge"`
			IPMasq bool   `json:"ipMasq"`
			IPAM   struct {
				DataDir string `json:"dataDir"`
				Ranges  [][]struct {
					Subnet string `json:"subnet"`
				} `json:"ranges"`
			} `json:"ipam"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(data, &conf); err != nil {
		t.Fatalf("CNI config is not JSON: %v\n%s", err, data)
	}
	b := conf.Plugins[0]
	got := []string{b.Type, b.Bridge, b.IPAM.DataDir, b.IPAM.Ranges[0][0].Subnet, conf.Plugins[1].Type}
	want := []string{"bridge", BridgeName, "/work/main/.cluster/cni/ipam", PodCIDR, "portmap"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CNI config (-want +got):\n%s", diff)
	}
	if b.IPMasq {
		t.Error("ipMasq is on: pods must not reach beyond the machine")
	}
}

func TestKubeProxyConfig(t *testing.T) {
	data, err := render("kube-proxy", kubeProxyConfig, testRenderData())
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	got := []any{cfg["mode"], cfg["clusterCIDR"], cfg["healthzBindAddress"], cfg["metricsBindAddress"], cfg["conntrack"].(map[string]any)["maxPerCore"]}
	want := []any{"iptables", PodCIDR, "127.0.0.1:10256", "127.0.0.1:10249", float64(0)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kube-proxy config (-want +got):\n%s", diff)
	}
}

func TestShimSocketDir(t *testing.T) {
	tests := []struct {
		root, want string
	}{
		{"/work/main/.cluster", "/work/main/.cluster/containerd/s"},
		// 107 bytes at most: a deep checkout falls back to containerd's default.
		{"/" + strings.Repeat("d", 40) + "/.cluster", ""},
	}
	for _, tt := range tests {
		if got := (Layout{Root: tt.root}).ShimSocketDir(); got != tt.want {
			t.Errorf("ShimSocketDir(%q) = %q, want %q", tt.root, got, tt.want)
		}
	}
}
