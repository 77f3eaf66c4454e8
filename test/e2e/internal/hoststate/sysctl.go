package hoststate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Sysctls are the kernel parameters the cluster's parts may change: the kubelet tunes
// memory overcommit and panics (unless protectKernelDefaults, which would make it refuse
// to start on an untuned host), the CNI bridge plugin turns on IPv4 forwarding, and
// kube-proxy may tune conntrack and route_localnet.
var Sysctls = []string{
	"net.ipv4.ip_forward",
	"net.ipv4.conf.all.forwarding",
	"net.ipv4.conf.default.forwarding",
	"net.ipv6.conf.all.forwarding",
	"net.ipv6.conf.default.forwarding",
	"net.ipv4.conf.all.route_localnet",
	"net.bridge.bridge-nf-call-iptables",
	"net.bridge.bridge-nf-call-ip6tables",
	"net.netfilter.nf_conntrack_max",
	"net.netfilter.nf_conntrack_tcp_timeout_established",
	"net.netfilter.nf_conntrack_tcp_timeout_close_wait",
	"vm.overcommit_memory",
	"vm.panic_on_oom",
	"kernel.panic",
	"kernel.panic_on_oops",
	"kernel.keys.root_maxkeys",
	"kernel.keys.root_maxbytes",
}

func sysctlPath(key string) string {
	return filepath.Join("/proc/sys", strings.ReplaceAll(key, ".", "/"))
}

// ReadSysctls returns the current value of each key that exists on this kernel.
func ReadSysctls(keys []string) (map[string]string, error) {
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		v, err := os.ReadFile(sysctlPath(k))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[k] = strings.TrimSpace(string(v))
	}
	return out, nil
}

// RestoreSysctls writes back the values ReadSysctls returned, ip_forward first: writing
// it resets the per-interface forwarding switches, which are then restored after it.
func RestoreSysctls(values map[string]string) error {
	var errs []error
	write := func(k string) {
		v, ok := values[k]
		if !ok {
			return
		}
		cur, err := os.ReadFile(sysctlPath(k))
		if err == nil && strings.TrimSpace(string(cur)) == v {
			return
		}
		if err := os.WriteFile(sysctlPath(k), []byte(v+"\n"), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("sysctl %s=%s: %w", k, v, err))
		}
	}
	write("net.ipv4.ip_forward")
	for k := range values {
		if k != "net.ipv4.ip_forward" {
			write(k)
		}
	}
	return errors.Join(errs...)
}
