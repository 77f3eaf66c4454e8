package config

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/cli"
)

// VendorAuto lets discovery pick the vendor: the first of nvidia, amd, intel found on
// the node, else cpu.
const VendorAuto = "auto"

// Defaults. Each default lives here and nowhere else.
const (
	// DefaultHostRoot is where the host's /dev, /sys and /proc are found.
	DefaultHostRoot = "/"
	// DefaultDevicePluginDir is the kubelet's device plugin directory; the kubelet
	// serves kubelet.sock there and dials the plugins' sockets in it.
	DefaultDevicePluginDir = "/var/lib/kubelet/device-plugins"
	// DefaultPodResourcesSocket is the kubelet's PodResources API socket.
	DefaultPodResourcesSocket = "/var/lib/kubelet/pod-resources/kubelet.sock"
	// DefaultSlotsPerDevice is how many workers share one GPU. Four keeps a current GPU
	// busy with VMAF's feature kernels while bounding per-worker memory.
	DefaultSlotsPerDevice = 4
	// DefaultCPUsPerSlot is how many CPUs one CPU slot stands for.
	DefaultCPUsPerSlot = 2
	// DefaultHealthCheckInterval is the periodic device check. fsnotify reports a
	// device node removal at once; the poll catches sysfs changes (which inotify does
	// not report) and must stay under the 1 s detection target.
	DefaultHealthCheckInterval = 500 * time.Millisecond
	// DefaultRecoveryDelay is how long a device must stay present before its slots
	// turn Healthy again, so a flapping device does not attract work.
	DefaultRecoveryDelay = 3 * time.Second
	// DefaultHeartbeatInterval is the VmafxNode heartbeat period: six beats fit in the
	// operator's 60 s staleness window, so a node survives a few lost writes.
	DefaultHeartbeatInterval = 10 * time.Second
	// DefaultStatusHeartbeatFor is how long a started plugin also stamps the deprecated
	// status.lastHeartbeat on every beat besides renewing its Lease: long enough for a
	// rolling upgrade to replace an operator and vmafx-scheduler of the previous release,
	// which read only the status; short enough that a steady node soon costs no status
	// write per beat.
	DefaultStatusHeartbeatFor = 5 * time.Minute
	// DefaultStatusReportPeriod is the kubelet's nodeStatusReportFrequency: the VmafxNode
	// status is patched at least this often even when nothing in it changed.
	DefaultStatusReportPeriod = 5 * time.Minute
	// DefaultSelfTestDir is the host directory of the workers' Vulkan self-test
	// verdicts, one subdirectory per GPU. Under /run, a tmpfs: a reboot, which a
	// driver upgrade takes, forgets the verdicts of the old driver.
	DefaultSelfTestDir = "/run/vmafx/selftest"
	// DefaultHTTPAddress serves /metrics, /healthz and /readyz.
	DefaultHTTPAddress = ":8080"
)

// Config is the device plugin's effective configuration.
type Config struct {
	// File is the config file the other values were read from ("" for none).
	File string
	// HostRoot is where the host's /dev, /sys and /proc are mounted.
	HostRoot string
	// DevicePluginDir is the kubelet's device plugin socket directory.
	DevicePluginDir string
	// PodResourcesSocket is the kubelet's PodResources API socket ("" to not count
	// allocated slots).
	PodResourcesSocket string
	// Vendor is auto or the vendor whose devices to offer (nvidia, amd, intel, cpu).
	Vendor string
	// SlotsPerDevice is how many times each GPU is offered.
	SlotsPerDevice int
	// CPUsPerSlot sizes CPU slots: CPUs / CPUsPerSlot, at least 1.
	CPUsPerSlot int
	// CPUSlots, when above 0, is the number of CPU slots, overriding CPUsPerSlot.
	CPUSlots int
	// CDI adds CDI device names to Allocate responses.
	CDI bool
	// CDIKind overrides the CDI kind (vendor.com/class); "" uses the vendor's usual one.
	CDIKind string
	// HealthCheckInterval is the periodic device check.
	HealthCheckInterval time.Duration
	// RecoveryDelay is how long a device must stay present to be Healthy again.
	RecoveryDelay time.Duration
	// HeartbeatInterval is the VmafxNode heartbeat period; 0 turns the heartbeat off.
	HeartbeatInterval time.Duration
	// StatusHeartbeatFor is how long after start the heartbeat also stamps
	// status.lastHeartbeat; 0 for never.
	StatusHeartbeatFor time.Duration
	// StatusReportPeriod is the longest the status goes unpatched; 0: only on change.
	StatusReportPeriod time.Duration
	// NodeName is the Kubernetes node the plugin runs on.
	NodeName string
	// Namespace is where the node's VmafxNode lives.
	Namespace string
	// WorkerImage is recorded in the VmafxNode's spec.image.
	WorkerImage string
	// Kubeconfig is a kubeconfig file; "" uses the in-cluster config.
	Kubeconfig string
	// HTTPAddress serves metrics and health probes; "" turns the server off.
	HTTPAddress string
	// SelfTestDir is the host directory where workers leave their GPU's Vulkan
	// self-test verdict, mounted at the same path in the plugin; "" turns it off.
	SelfTestDir string

	// Origins tells, per file key, where the value came from: flag, env, file or default.
	Origins map[string]Source
}

// Source is where a setting's value came from.
type Source = cli.Source

// The sources, in increasing precedence.
const (
	SourceDefault = cli.SourceDefault
	SourceFile    = cli.SourceFile
	SourceEnv     = cli.SourceEnv
	SourceFlag    = cli.SourceFlag
)

// Default returns the configuration with every default applied.
func Default() Config {
	return Config{
		HostRoot:            DefaultHostRoot,
		DevicePluginDir:     DefaultDevicePluginDir,
		PodResourcesSocket:  DefaultPodResourcesSocket,
		Vendor:              VendorAuto,
		SlotsPerDevice:      DefaultSlotsPerDevice,
		CPUsPerSlot:         DefaultCPUsPerSlot,
		HealthCheckInterval: DefaultHealthCheckInterval,
		RecoveryDelay:       DefaultRecoveryDelay,
		HeartbeatInterval:   DefaultHeartbeatInterval,
		StatusHeartbeatFor:  DefaultStatusHeartbeatFor,
		StatusReportPeriod:  DefaultStatusReportPeriod,
		SelfTestDir:         DefaultSelfTestDir,
		Namespace:           vmafxv1.SystemNamespace,
		HTTPAddress:         DefaultHTTPAddress,
	}
}

// maxSlotsPerDevice bounds slotsPerDevice: more workers than this on one device would
// only queue on it.
const maxSlotsPerDevice = 64

// Validate reports every invalid setting, each under its file key.
func (c *Config) Validate() error {
	var errs field.ErrorList
	switch c.Vendor {
	case VendorAuto, string(vmafxv1.VendorNVIDIA), string(vmafxv1.VendorAMD), string(vmafxv1.VendorIntel), string(vmafxv1.VendorCPU):
	default:
		errs = append(errs, field.NotSupported(field.NewPath("vendor"), c.Vendor,
			[]string{VendorAuto, string(vmafxv1.VendorNVIDIA), string(vmafxv1.VendorAMD), string(vmafxv1.VendorIntel), string(vmafxv1.VendorCPU)}))
	}
	if c.SlotsPerDevice < 1 || c.SlotsPerDevice > maxSlotsPerDevice {
		errs = append(errs, field.Invalid(field.NewPath("slotsPerDevice"), c.SlotsPerDevice, fmt.Sprintf("must be between 1 and %d", maxSlotsPerDevice)))
	}
	if c.CPUsPerSlot < 1 {
		errs = append(errs, field.Invalid(field.NewPath("cpusPerSlot"), c.CPUsPerSlot, "must be at least 1"))
	}
	if c.CPUSlots < 0 {
		errs = append(errs, field.Invalid(field.NewPath("cpuSlots"), c.CPUSlots, "must be 0 (derive from CPUs) or more"))
	}
	if c.CDIKind != "" && !strings.Contains(c.CDIKind, "/") {
		errs = append(errs, field.Invalid(field.NewPath("cdiKind"), c.CDIKind, "must look like vendor.com/class"))
	}
	if c.HostRoot == "" {
		errs = append(errs, field.Required(field.NewPath("hostRoot"), ""))
	}
	if c.DevicePluginDir == "" {
		errs = append(errs, field.Required(field.NewPath("devicePluginDir"), ""))
	}
	if c.SelfTestDir != "" && !filepath.IsAbs(c.SelfTestDir) {
		errs = append(errs, field.Invalid(field.NewPath("selfTestDir"), c.SelfTestDir, "must be an absolute path (or empty: off)"))
	}
	if c.HealthCheckInterval <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("healthCheckInterval"), c.HealthCheckInterval.String(), "must be positive"))
	}
	if c.RecoveryDelay < 0 {
		errs = append(errs, field.Invalid(field.NewPath("recoveryDelay"), c.RecoveryDelay.String(), "must not be negative"))
	}
	if c.HeartbeatInterval < 0 {
		errs = append(errs, field.Invalid(field.NewPath("heartbeatInterval"), c.HeartbeatInterval.String(), "must be 0 (off) or positive"))
	}
	if c.StatusHeartbeatFor < 0 {
		errs = append(errs, field.Invalid(field.NewPath("statusHeartbeatFor"), c.StatusHeartbeatFor.String(), "must be 0 (never) or positive"))
	}
	if c.StatusReportPeriod < 0 {
		errs = append(errs, field.Invalid(field.NewPath("statusReportPeriod"), c.StatusReportPeriod.String(), "must be 0 (only on change) or positive"))
	}
	if c.HeartbeatInterval > 0 {
		if c.NodeName == "" {
			errs = append(errs, field.Required(field.NewPath("nodeName"), "the heartbeat needs the node name (NODE_NAME from the downward API)"))
		} else if msgs := validation.IsDNS1123Subdomain(c.NodeName); len(msgs) > 0 {
			errs = append(errs, field.Invalid(field.NewPath("nodeName"), c.NodeName, strings.Join(msgs, "; ")))
		}
		if msgs := validation.IsDNS1123Label(c.Namespace); len(msgs) > 0 {
			errs = append(errs, field.Invalid(field.NewPath("namespace"), c.Namespace, strings.Join(msgs, "; ")))
		}
	}
	return errs.ToAggregate()
}

// KeysAndValues lists every effective setting with where it came from, for one log line.
func (c *Config) KeysAndValues() []any {
	var kv []any
	for _, o := range options {
		v := o.value(c)
		src := c.Origins[o.key]
		if src == "" {
			src = SourceDefault
		}
		kv = append(kv, o.key, v+" ("+string(src)+")")
	}
	return kv
}
