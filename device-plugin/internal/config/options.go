package config

import (
	"fmt"
	"reflect"
	"strconv"
	"time"

	"github.com/vmafx/vmafx/internal/cli"
)

// option is one setting: its flag, environment twin and config file key, and the field
// of a Config it sets.
type option struct {
	flag, env, key, usage string
	field                 func(*Config) any // *string, *int, *bool or *time.Duration
}

// Option describes one setting for documentation: flag, environment variable, file
// key, default and meaning.
type Option = cli.Option

// Options lists every setting in the order of the docs' configuration table.
func Options() []Option { return NewLoader().set.Options() }

// The config file is named by a flag and an env var only, never by itself.
const (
	configFlag = "config"
	configEnv  = "VMAFX_CONFIG"
)

var options = []option{
	{"host-root", "VMAFX_HOST_ROOT", "hostRoot", "Where the host's /dev, /sys and /proc are mounted (the DaemonSet mounts them under /host).",
		func(c *Config) any { return &c.HostRoot }},
	{"device-plugin-dir", "VMAFX_DEVICE_PLUGIN_DIR", "devicePluginDir", "The kubelet's device plugin directory (holds kubelet.sock and the plugin's socket).",
		func(c *Config) any { return &c.DevicePluginDir }},
	{"pod-resources-socket", "VMAFX_POD_RESOURCES_SOCKET", "podResourcesSocket", "The kubelet's PodResources API socket, read to count allocated slots (empty: do not count).",
		func(c *Config) any { return &c.PodResourcesSocket }},
	{"vendor", "VMAFX_VENDOR", "vendor", "Which devices to offer: auto (first of nvidia, amd, intel found, else cpu), nvidia, amd, intel or cpu.",
		func(c *Config) any { return &c.Vendor }},
	{"slots-per-device", "VMAFX_SLOTS_PER_DEVICE", "slotsPerDevice", "How many slots each GPU is offered as (1 to 64).",
		func(c *Config) any { return &c.SlotsPerDevice }},
	{"cpus-per-slot", "VMAFX_CPUS_PER_SLOT", "cpusPerSlot", "Without a GPU: one slot per this many node CPUs (at least one slot).",
		func(c *Config) any { return &c.CPUsPerSlot }},
	{"cpu-slots", "VMAFX_CPU_SLOTS", "cpuSlots", "Without a GPU: this many slots, overriding cpusPerSlot (0: derive from CPUs).",
		func(c *Config) any { return &c.CPUSlots }},
	{"cdi", "VMAFX_CDI", "cdi", "Add CDI device names (`<kind>=<index>`) to Allocate responses.",
		func(c *Config) any { return &c.CDI }},
	{"cdi-kind", "VMAFX_CDI_KIND", "cdiKind", "CDI kind to use instead of the vendor's (nvidia.com/gpu, amd.com/gpu, intel.com/gpu).",
		func(c *Config) any { return &c.CDIKind }},
	{"health-check-interval", "VMAFX_HEALTH_CHECK_INTERVAL", "healthCheckInterval", "Periodic device check, on top of fsnotify events.",
		func(c *Config) any { return &c.HealthCheckInterval }},
	{"recovery-delay", "VMAFX_RECOVERY_DELAY", "recoveryDelay", "How long a device must stay present before its slots are Healthy again.",
		func(c *Config) any { return &c.RecoveryDelay }},
	{"heartbeat-interval", "VMAFX_HEARTBEAT_INTERVAL", "heartbeatInterval", "Heartbeat period: how often the node's Lease is renewed (0: no heartbeat, no API server access).",
		func(c *Config) any { return &c.HeartbeatInterval }},
	{"status-heartbeat-for", "VMAFX_STATUS_HEARTBEAT_FOR", "statusHeartbeatFor", "How long after start the heartbeat also stamps the deprecated status.lastHeartbeat, for an operator and scheduler of the previous release during an upgrade (0: never).",
		func(c *Config) any { return &c.StatusHeartbeatFor }},
	{"status-report-period", "VMAFX_STATUS_REPORT_PERIOD", "statusReportPeriod", "Longest time the VmafxNode status goes unpatched when nothing in it changes (0: only on change).",
		func(c *Config) any { return &c.StatusReportPeriod }},
	{"node-name", "NODE_NAME", "nodeName", "The node the plugin runs on; names its VmafxNode (from the downward API).",
		func(c *Config) any { return &c.NodeName }},
	{"namespace", "POD_NAMESPACE", "namespace", "Namespace of the node's VmafxNode (from the downward API).",
		func(c *Config) any { return &c.Namespace }},
	{"worker-image", "VMAFX_WORKER_IMAGE", "workerImage", "Worker image recorded in the VmafxNode's spec.image.",
		func(c *Config) any { return &c.WorkerImage }},
	{"kubeconfig", "KUBECONFIG", "kubeconfig", "Kubeconfig file for the API server (empty: in-cluster config).",
		func(c *Config) any { return &c.Kubeconfig }},
	{"http-address", "VMAFX_HTTP_ADDRESS", "httpAddress", "Address serving /metrics, /healthz and /readyz (empty: off).",
		func(c *Config) any { return &c.HTTPAddress }},
	{"self-test-dir", "VMAFX_SELF_TEST_DIR", "selfTestDir", "Host directory, mounted at the same path, where workers on a GPU slot leave the Vulkan self-test's verdict for their device; a device that failed is Unhealthy (empty: off).",
		func(c *Config) any { return &c.SelfTestDir }},
}

// add adds o to s, bound to its field of c, with the field's value as the default. The
// values are checked for their type only; Validate checks them against each other.
func (o option) add(s *cli.Set, c *Config) {
	s.Key(o.key)
	switch p := o.field(c).(type) {
	case *string:
		s.String(p, o.flag, o.env, *p, o.usage)
	case *bool:
		s.Bool(p, o.flag, o.env, *p, o.usage)
	case *int:
		s.TypedFunc("int", o.flag, o.env, strconv.Itoa(*p), o.usage, func(v string) error {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("not an integer: %q", v)
			}
			*p = n
			return nil
		})
	case *time.Duration:
		s.TypedFunc("duration", o.flag, o.env, p.String(), o.usage, func(v string) error {
			d, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("not a duration (like 500ms or 10s): %q", v)
			}
			*p = d
			return nil
		})
	default:
		panic(fmt.Sprintf("option %s: a field of type %T", o.flag, p))
	}
}

// value is o's value in c as the log line writes it.
func (o option) value(c *Config) string { return fmt.Sprint(reflect.ValueOf(o.field(c)).Elem()) }
