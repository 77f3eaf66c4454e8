package config

import (
	"flag"
	"fmt"
	"strconv"
	"time"
)

// option is one setting: its flag, environment twin and config file key. bind returns
// a flag.Value that reads and writes the setting in a Config.
type option struct {
	flag, env, key, usage string
	bind                  func(*Config) flag.Value
}

// Option describes one setting for documentation: flag, environment variable, file
// key, default and meaning.
type Option struct {
	Flag, Env, Key, Default, Usage string
}

// Options lists every setting in the order of the docs' configuration table.
func Options() []Option {
	def := Default()
	out := []Option{{Flag: configFlag, Env: configEnv, Usage: "Optional config file (apiVersion " + FileAPIVersion + ", kind " + FileKind + ")."}}
	for _, o := range options {
		out = append(out, Option{Flag: o.flag, Env: o.env, Key: o.key, Default: o.bind(&def).String(), Usage: o.usage})
	}
	return out
}

// The config file is named by a flag and an env var only, never by itself.
const (
	configFlag = "config"
	configEnv  = "VMAFX_CONFIG"
)

var options = []option{
	{"host-root", "VMAFX_HOST_ROOT", "hostRoot", "Where the host's /dev, /sys and /proc are mounted (the DaemonSet mounts them under /host).",
		func(c *Config) flag.Value { return (*stringValue)(&c.HostRoot) }},
	{"device-plugin-dir", "VMAFX_DEVICE_PLUGIN_DIR", "devicePluginDir", "The kubelet's device plugin directory (holds kubelet.sock and the plugin's socket).",
		func(c *Config) flag.Value { return (*stringValue)(&c.DevicePluginDir) }},
	{"pod-resources-socket", "VMAFX_POD_RESOURCES_SOCKET", "podResourcesSocket", "The kubelet's PodResources API socket, read to count allocated slots (empty: do not count).",
		func(c *Config) flag.Value { return (*stringValue)(&c.PodResourcesSocket) }},
	{"vendor", "VMAFX_VENDOR", "vendor", "Which devices to offer: auto (first of nvidia, amd, intel found, else cpu), nvidia, amd, intel or cpu.",
		func(c *Config) flag.Value { return (*stringValue)(&c.Vendor) }},
	{"slots-per-device", "VMAFX_SLOTS_PER_DEVICE", "slotsPerDevice", "How many slots each GPU is offered as (1 to 64).",
		func(c *Config) flag.Value { return (*intValue)(&c.SlotsPerDevice) }},
	{"cpus-per-slot", "VMAFX_CPUS_PER_SLOT", "cpusPerSlot", "Without a GPU: one slot per this many node CPUs (at least one slot).",
		func(c *Config) flag.Value { return (*intValue)(&c.CPUsPerSlot) }},
	{"cpu-slots", "VMAFX_CPU_SLOTS", "cpuSlots", "Without a GPU: this many slots, overriding cpusPerSlot (0: derive from CPUs).",
		func(c *Config) flag.Value { return (*intValue)(&c.CPUSlots) }},
	{"cdi", "VMAFX_CDI", "cdi", "Add CDI device names (`<kind>=<index>`) to Allocate responses.",
		func(c *Config) flag.Value { return (*boolValue)(&c.CDI) }},
	{"cdi-kind", "VMAFX_CDI_KIND", "cdiKind", "CDI kind to use instead of the vendor's (nvidia.com/gpu, amd.com/gpu, intel.com/gpu).",
		func(c *Config) flag.Value { return (*stringValue)(&c.CDIKind) }},
	{"health-check-interval", "VMAFX_HEALTH_CHECK_INTERVAL", "healthCheckInterval", "Periodic device check, on top of fsnotify events.",
		func(c *Config) flag.Value { return (*durationValue)(&c.HealthCheckInterval) }},
	{"recovery-delay", "VMAFX_RECOVERY_DELAY", "recoveryDelay", "How long a device must stay present before its slots are Healthy again.",
		func(c *Config) flag.Value { return (*durationValue)(&c.RecoveryDelay) }},
	{"heartbeat-interval", "VMAFX_HEARTBEAT_INTERVAL", "heartbeatInterval", "Heartbeat period: how often the node's Lease is renewed (0: no heartbeat, no API server access).",
		func(c *Config) flag.Value { return (*durationValue)(&c.HeartbeatInterval) }},
	{"status-heartbeat-for", "VMAFX_STATUS_HEARTBEAT_FOR", "statusHeartbeatFor", "How long after start the heartbeat also stamps the deprecated status.lastHeartbeat, for an operator and scheduler of the previous release during an upgrade (0: never).",
		func(c *Config) flag.Value { return (*durationValue)(&c.StatusHeartbeatFor) }},
	{"status-report-period", "VMAFX_STATUS_REPORT_PERIOD", "statusReportPeriod", "Longest time the VmafxNode status goes unpatched when nothing in it changes (0: only on change).",
		func(c *Config) flag.Value { return (*durationValue)(&c.StatusReportPeriod) }},
	{"node-name", "NODE_NAME", "nodeName", "The node the plugin runs on; names its VmafxNode (from the downward API).",
		func(c *Config) flag.Value { return (*stringValue)(&c.NodeName) }},
	{"namespace", "POD_NAMESPACE", "namespace", "Namespace of the node's VmafxNode (from the downward API).",
		func(c *Config) flag.Value { return (*stringValue)(&c.Namespace) }},
	{"worker-image", "VMAFX_WORKER_IMAGE", "workerImage", "Worker image recorded in the VmafxNode's spec.image.",
		func(c *Config) flag.Value { return (*stringValue)(&c.WorkerImage) }},
	{"kubeconfig", "KUBECONFIG", "kubeconfig", "Kubeconfig file for the API server (empty: in-cluster config).",
		func(c *Config) flag.Value { return (*stringValue)(&c.Kubeconfig) }},
	{"http-address", "VMAFX_HTTP_ADDRESS", "httpAddress", "Address serving /metrics, /healthz and /readyz (empty: off).",
		func(c *Config) flag.Value { return (*stringValue)(&c.HTTPAddress) }},
}

type stringValue string

func (v *stringValue) String() string     { return string(*v) }
func (v *stringValue) Set(s string) error { *v = stringValue(s); return nil }

type intValue int

func (v *intValue) String() string { return strconv.Itoa(int(*v)) }
func (v *intValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("not an integer: %q", s)
	}
	*v = intValue(n)
	return nil
}

type boolValue bool

func (v *boolValue) String() string { return strconv.FormatBool(bool(*v)) }
func (v *boolValue) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("not a boolean: %q", s)
	}
	*v = boolValue(b)
	return nil
}
func (v *boolValue) IsBoolFlag() bool { return true }

type durationValue time.Duration

func (v *durationValue) String() string { return time.Duration(*v).String() }
func (v *durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("not a duration (like 500ms or 10s): %q", s)
	}
	*v = durationValue(d)
	return nil
}

// rawValue records a flag's text so it can be applied after the file and the
// environment; set tells whether the flag was given at all.
type rawValue struct {
	text   string
	set    bool
	isBool bool
	check  flag.Value // a scratch value that validates the text while parsing
}

func (v *rawValue) String() string {
	if v == nil || v.check == nil {
		return ""
	}
	return v.check.String()
}

func (v *rawValue) Set(s string) error {
	if err := v.check.Set(s); err != nil {
		return err
	}
	v.text, v.set = s, true
	return nil
}

func (v *rawValue) IsBoolFlag() bool { return v.isBool }

// Type names the value in --help.
func (v *rawValue) Type() string {
	switch v.check.(type) {
	case *boolValue:
		return "bool"
	case *intValue:
		return "int"
	case *durationValue:
		return "duration"
	}
	return "string"
}
