package config

import (
	"errors"
	"fmt"
	"net"
	"path"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Config is the operator's effective configuration.
type Config struct {
	// MetricsAddr serves Prometheus metrics; "0" disables them.
	MetricsAddr string
	// HealthProbeAddr serves /healthz and /readyz.
	HealthProbeAddr string
	// LeaderElection makes replicas elect one active leader.
	LeaderElection bool
	// LeaderElectionID names the Lease the replicas compete for.
	LeaderElectionID string
	// LeaderElectionNamespace holds that Lease; empty means the operator's own namespace.
	LeaderElectionNamespace string
	// WebhookPort serves admission webhooks; 0 disables them.
	WebhookPort int
	// WebhookHost is the address the webhook server binds to.
	WebhookHost string
	// GracefulShutdown bounds how long running reconciles may take to finish on SIGTERM.
	GracefulShutdown time.Duration
	// LogLevel is debug, info, warn or error.
	LogLevel string

	// NodeStaleAfter is how old a VmafxNode heartbeat may be before the node is unhealthy.
	NodeStaleAfter time.Duration
	// RetryBackoff is the wait before the second attempt of a failed job; it doubles for
	// each further failure, up to MaxRetryBackoff.
	RetryBackoff    time.Duration
	MaxRetryBackoff time.Duration

	// Worker is how worker Pods are built.
	Worker WorkerConfig
	// Volumes says which node-level volumes a job may mount.
	Volumes VolumePolicy

	// Namespace is the operator's own namespace: the only one whose VmafxNodes count.
	Namespace string
	// UnhealthyThreshold is the share of VmafxNodes (when more than two) that may look stale
	// at once before the operator stops moving jobs: so many at once points at the control
	// plane or the operator's view of it, not at the nodes.
	UnhealthyThreshold float64

	// PendingDeadline is the default of spec.pendingDeadlineSeconds; 0: none.
	PendingDeadline time.Duration
	// PodStartTimeout bounds how long a worker Pod bound to a node may take to start its
	// container (image pull, volume mount, Secret lookup) before the attempt fails.
	PodStartTimeout time.Duration
	// TerminatingTimeout bounds how long a deleted worker Pod may stay Terminating (a node
	// that went away with it) before the attempt counts as lost and the Pod is force-deleted.
	TerminatingTimeout time.Duration
	// TTLAfterFinished is the default of spec.ttlSecondsAfterFinished; negative: never.
	TTLAfterFinished time.Duration

	// MaxConcurrentReconciles is the number of jobs reconciled in parallel.
	MaxConcurrentReconciles int
	// MaxWorkersPerNamespace caps the live worker Pods (created and not finished) of one
	// namespace, so that one team's burst cannot take every slot; 0: no cap.
	MaxWorkersPerNamespace int
	// KubeAPIQPS and KubeAPIBurst bound the operator's request rate to the API server.
	KubeAPIQPS   float32
	KubeAPIBurst int
}

// WorkerConfig is how worker Pods are built.
type WorkerConfig struct {
	Image      string
	PullPolicy corev1.PullPolicy
	Resources  corev1.ResourceRequirements
	// ServiceAccount runs worker Pods; its token is never mounted.
	ServiceAccount string
	// PlainHTTPRegistries are the OCI registries (host[:port]) that workers and trainers
	// reach over plain HTTP instead of HTTPS, such as an in-cluster registry without TLS.
	PlainHTTPRegistries []string
	// TrainerServiceAccount runs trainer Pods; it needs to read VmafxJobs and Nodes.
	TrainerServiceAccount string
	// KueueQueueName, when set, is the Kueue LocalQueue that worker Pods are submitted to
	// (the label kueue.x-k8s.io/queue-name), unless the job names its own in that label.
	KueueQueueName string
}

// VolumePolicy says which node-level volume sources a VmafxJob may mount. A job's volume
// becomes a worker Pod's volume, created with the operator's permissions, so a hostPath or
// an NFS export is the operator's to allow, not the job author's. PVCs (bound by the
// cluster's own storage rules) and CSI volumes are always allowed, read-only.
type VolumePolicy struct {
	// HostPaths are the absolute path prefixes a hostPath volume may name (a path matches
	// a prefix when it is the prefix or lies below it).
	HostPaths []string
	// NFSServers are the NFS servers an nfs volume may name; "*" allows any.
	NFSServers []string
}

// Lookup returns an environment variable and whether it is set.
type Lookup func(name string) (string, bool)

// Environment variable names.
const (
	EnvMetricsAddr             = "VMAFX_OPERATOR_METRICS_ADDR"
	EnvHealthProbeAddr         = "VMAFX_OPERATOR_HEALTH_PROBE_ADDR"
	EnvLeaderElection          = "VMAFX_OPERATOR_LEADER_ELECTION"
	EnvLeaderElectionID        = "VMAFX_OPERATOR_LEADER_ELECTION_ID"
	EnvLeaderElectionNamespace = "VMAFX_OPERATOR_LEADER_ELECTION_NAMESPACE"
	EnvWebhookPort             = "VMAFX_OPERATOR_WEBHOOK_PORT"
	EnvWebhookHost             = "VMAFX_OPERATOR_WEBHOOK_HOST"
	EnvGracefulShutdown        = "VMAFX_OPERATOR_GRACEFUL_SHUTDOWN"
	EnvLogLevel                = "VMAFX_LOG_LEVEL"
	EnvNodeStaleAfter          = "VMAFX_OPERATOR_NODE_STALE_AFTER"
	EnvRetryBackoff            = "VMAFX_OPERATOR_RETRY_BACKOFF"
	EnvMaxRetryBackoff         = "VMAFX_OPERATOR_MAX_RETRY_BACKOFF"
	EnvWorkerImage             = "VMAFX_OPERATOR_WORKER_IMAGE"
	EnvWorkerPullPolicy        = "VMAFX_OPERATOR_WORKER_PULL_POLICY"
	EnvWorkerCPURequest        = "VMAFX_OPERATOR_WORKER_CPU_REQUEST"
	EnvWorkerCPULimit          = "VMAFX_OPERATOR_WORKER_CPU_LIMIT"
	EnvWorkerMemoryRequest     = "VMAFX_OPERATOR_WORKER_MEMORY_REQUEST"
	EnvWorkerMemoryLimit       = "VMAFX_OPERATOR_WORKER_MEMORY_LIMIT"
	EnvWorkerServiceAccount    = "VMAFX_OPERATOR_WORKER_SERVICE_ACCOUNT"
	EnvMaxConcurrentReconciles = "VMAFX_OPERATOR_MAX_CONCURRENT_RECONCILES"
	EnvKubeAPIQPS              = "VMAFX_OPERATOR_KUBE_API_QPS"
	EnvKubeAPIBurst            = "VMAFX_OPERATOR_KUBE_API_BURST"
	EnvAllowedHostPaths        = "VMAFX_OPERATOR_ALLOWED_HOST_PATHS"
	EnvAllowedNFSServers       = "VMAFX_OPERATOR_ALLOWED_NFS_SERVERS"
	EnvNamespace               = "VMAFX_OPERATOR_NAMESPACE"
	EnvUnhealthyThreshold      = "VMAFX_OPERATOR_UNHEALTHY_THRESHOLD"
	EnvPendingDeadline         = "VMAFX_OPERATOR_PENDING_DEADLINE"
	EnvPodStartTimeout         = "VMAFX_OPERATOR_POD_START_TIMEOUT"
	EnvTerminatingTimeout      = "VMAFX_OPERATOR_TERMINATING_TIMEOUT"
	EnvTTLAfterFinished        = "VMAFX_OPERATOR_TTL_AFTER_FINISHED"
	EnvPlainHTTPRegistries     = "VMAFX_OPERATOR_PLAIN_HTTP_REGISTRIES"
	EnvTrainerServiceAccount   = "VMAFX_OPERATOR_TRAINER_SERVICE_ACCOUNT"
	EnvMaxWorkersPerNamespace  = "VMAFX_OPERATOR_MAX_WORKERS_PER_NAMESPACE"
	EnvKueueQueueName          = "VMAFX_OPERATOR_KUEUE_QUEUE_NAME"
)

// Defaults. The heartbeat period of the device plugin is 10 s, so 60 s of staleness
// tolerates five lost heartbeats before a node's jobs are moved.
const (
	DefaultMetricsAddr             = ":8081"
	DefaultHealthProbeAddr         = ":8082"
	DefaultLeaderElectionID        = "vmafx-operator.vmafx.dev"
	DefaultGracefulShutdown        = 30 * time.Second
	DefaultLogLevel                = "info"
	DefaultNodeStaleAfter          = 60 * time.Second
	DefaultRetryBackoff            = 10 * time.Second
	DefaultMaxRetryBackoff         = 5 * time.Minute
	DefaultWorkerImage             = "vmafx-worker:dev"
	DefaultWorkerPullPolicy        = corev1.PullIfNotPresent
	DefaultWorkerCPURequest        = "500m"
	DefaultWorkerCPULimit          = "2"
	DefaultWorkerMemoryRequest     = "256Mi"
	DefaultWorkerMemoryLimit       = "1Gi"
	DefaultMaxConcurrentReconciles = 16
	// DefaultKubeAPIQPS and DefaultKubeAPIBurst let a burst of 1000 submitted jobs get
	// their Pods in about 5 s: each new job costs two writes (its Pod and its status), so
	// 200 QPS alone would take 10 s. The API server's priority and fairness still bound
	// the operator's share of the server.
	DefaultKubeAPIQPS   = 500
	DefaultKubeAPIBurst = 1000
	// DefaultNamespace is where the operator runs unless told otherwise.
	DefaultNamespace = "vmafx-system"
	// DefaultUnhealthyThreshold is the node lifecycle controller's unhealthy-zone threshold
	// (kube-controller-manager --unhealthy-zone-threshold).
	DefaultUnhealthyThreshold = 0.55
	// DefaultPodStartTimeout leaves a multi-gigabyte GPU image time to be pulled.
	DefaultPodStartTimeout = 10 * time.Minute
	// DefaultTerminatingTimeout is long after the worker's 10 s grace period: a kubelet
	// that is alive confirms a deletion within seconds.
	DefaultTerminatingTimeout = 2 * time.Minute
	// DefaultTTLAfterFinished keeps a week of results.
	DefaultTTLAfterFinished = 7 * 24 * time.Hour
	// DefaultTrainerServiceAccount is the account the manifests create for trainers.
	DefaultTrainerServiceAccount = "vmafx-trainer"
)

// Load reads the configuration through lookup (os.LookupEnv in the binary). All invalid
// variables are reported together.
func Load(lookup Lookup) (*Config, error) {
	p := parser{lookup: lookup}
	c := &Config{
		MetricsAddr:             p.addr(EnvMetricsAddr, DefaultMetricsAddr, true),
		HealthProbeAddr:         p.addr(EnvHealthProbeAddr, DefaultHealthProbeAddr, false),
		LeaderElection:          p.boolean(EnvLeaderElection, false),
		LeaderElectionID:        p.str(EnvLeaderElectionID, DefaultLeaderElectionID),
		LeaderElectionNamespace: p.str(EnvLeaderElectionNamespace, ""),
		WebhookPort:             p.integer(EnvWebhookPort, 0, 0, 65535),
		WebhookHost:             p.str(EnvWebhookHost, ""),
		GracefulShutdown:        p.duration(EnvGracefulShutdown, DefaultGracefulShutdown),
		LogLevel:                p.oneOf(EnvLogLevel, DefaultLogLevel, "debug", "info", "warn", "error"),
		NodeStaleAfter:          p.duration(EnvNodeStaleAfter, DefaultNodeStaleAfter),
		RetryBackoff:            p.duration(EnvRetryBackoff, DefaultRetryBackoff),
		MaxRetryBackoff:         p.duration(EnvMaxRetryBackoff, DefaultMaxRetryBackoff),
		Worker: WorkerConfig{
			Image:                 p.str(EnvWorkerImage, DefaultWorkerImage),
			PullPolicy:            corev1.PullPolicy(p.oneOf(EnvWorkerPullPolicy, string(DefaultWorkerPullPolicy), "Always", "IfNotPresent", "Never")),
			ServiceAccount:        p.str(EnvWorkerServiceAccount, ""),
			PlainHTTPRegistries:   p.list(EnvPlainHTTPRegistries),
			TrainerServiceAccount: p.str(EnvTrainerServiceAccount, DefaultTrainerServiceAccount),
			KueueQueueName:        p.labelValue(EnvKueueQueueName),
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{
					corev1.ResourceCPU:    p.quantity(EnvWorkerCPURequest, DefaultWorkerCPURequest),
					corev1.ResourceMemory: p.quantity(EnvWorkerMemoryRequest, DefaultWorkerMemoryRequest),
				},
				Limits: corev1.ResourceList{
					corev1.ResourceCPU:    p.quantity(EnvWorkerCPULimit, DefaultWorkerCPULimit),
					corev1.ResourceMemory: p.quantity(EnvWorkerMemoryLimit, DefaultWorkerMemoryLimit),
				},
			},
		},
		Volumes: VolumePolicy{
			HostPaths:  p.absPaths(EnvAllowedHostPaths),
			NFSServers: p.list(EnvAllowedNFSServers),
		},
		Namespace:               p.str(EnvNamespace, DefaultNamespace),
		UnhealthyThreshold:      p.fraction(EnvUnhealthyThreshold, DefaultUnhealthyThreshold),
		PendingDeadline:         p.durationOrZero(EnvPendingDeadline, 0),
		PodStartTimeout:         p.duration(EnvPodStartTimeout, DefaultPodStartTimeout),
		TerminatingTimeout:      p.duration(EnvTerminatingTimeout, DefaultTerminatingTimeout),
		TTLAfterFinished:        p.ttl(EnvTTLAfterFinished, DefaultTTLAfterFinished),
		MaxConcurrentReconciles: p.integer(EnvMaxConcurrentReconciles, DefaultMaxConcurrentReconciles, 1, 1000),
		MaxWorkersPerNamespace:  p.integer(EnvMaxWorkersPerNamespace, 0, 0, 1000000),
		KubeAPIQPS:              float32(p.integer(EnvKubeAPIQPS, DefaultKubeAPIQPS, 1, 100000)),
		KubeAPIBurst:            p.integer(EnvKubeAPIBurst, DefaultKubeAPIBurst, 1, 100000),
	}
	for _, pair := range [][2]corev1.ResourceName{{corev1.ResourceCPU, corev1.ResourceCPU}, {corev1.ResourceMemory, corev1.ResourceMemory}} {
		req, lim := c.Worker.Resources.Requests[pair[0]], c.Worker.Resources.Limits[pair[1]]
		if req.Cmp(lim) > 0 {
			p.fail("VMAFX_OPERATOR_WORKER_%s_REQUEST %s exceeds its limit %s", strings.ToUpper(string(pair[0])), req.String(), lim.String())
		}
	}
	if c.MaxRetryBackoff < c.RetryBackoff {
		p.fail("%s (%s) is shorter than %s (%s)", EnvMaxRetryBackoff, c.MaxRetryBackoff, EnvRetryBackoff, c.RetryBackoff)
	}
	if c.WebhookPort != 0 {
		// CRD validation (OpenAPI and CEL) refuses bad objects without a webhook; a
		// webhook server would only add a TLS certificate to manage.
		p.fail("%s=%d: admission webhooks are not built into this release (the CRDs validate every field); leave it 0", EnvWebhookPort, c.WebhookPort)
	}
	if c.Worker.Image == "" {
		p.fail("%s must not be empty", EnvWorkerImage)
	}
	if c.Namespace == "" {
		p.fail("%s must not be empty", EnvNamespace)
	}
	if err := errors.Join(p.errs...); err != nil {
		return nil, fmt.Errorf("invalid operator configuration: %w", err)
	}
	return c, nil
}

// parser collects every invalid variable instead of stopping at the first.
type parser struct {
	lookup Lookup
	errs   []error
}

func (p *parser) fail(format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf(format, args...))
}

func (p *parser) str(name, def string) string {
	if v, ok := p.lookup(name); ok {
		return strings.TrimSpace(v)
	}
	return def
}

func (p *parser) oneOf(name, def string, allowed ...string) string {
	v := p.str(name, def)
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	p.fail("%s=%q: must be one of %s", name, v, strings.Join(allowed, ", "))
	return def
}

func (p *parser) boolean(name string, def bool) bool {
	v, ok := p.lookup(name)
	if !ok {
		return def
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		p.fail("%s=%q: must be true or false", name, v)
		return def
	}
	return b
}

func (p *parser) integer(name string, def, lo, hi int) int {
	v, ok := p.lookup(name)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < lo || n > hi {
		p.fail("%s=%q: must be a whole number from %d to %d", name, v, lo, hi)
		return def
	}
	return n
}

func (p *parser) duration(name string, def time.Duration) time.Duration {
	v, ok := p.lookup(name)
	if !ok {
		return def
	}
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil || d <= 0 {
		p.fail("%s=%q: must be a positive duration such as 30s or 2m", name, v)
		return def
	}
	return d
}

// durationOrZero is duration that also accepts 0 (off).
func (p *parser) durationOrZero(name string, def time.Duration) time.Duration {
	v, ok := p.lookup(name)
	if !ok {
		return def
	}
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil || d < 0 {
		p.fail("%s=%q: must be 0 (off) or a positive duration such as 30s or 2m", name, v)
		return def
	}
	return d
}

// ttl is durationOrZero that also accepts "never" (returned as -1).
func (p *parser) ttl(name string, def time.Duration) time.Duration {
	v, ok := p.lookup(name)
	switch {
	case !ok:
		return def
	case strings.TrimSpace(v) == "never":
		return -1
	}
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil || d < 0 {
		p.fail("%s=%q: must be never, 0 (at once) or a positive duration such as 24h", name, v)
		return def
	}
	return d
}

func (p *parser) fraction(name string, def float64) float64 {
	v, ok := p.lookup(name)
	if !ok {
		return def
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f <= 0 || f > 1 {
		p.fail("%s=%q: must be a number above 0 and at most 1, such as 0.55", name, v)
		return def
	}
	return f
}

// labelValue reads a Kubernetes label value (empty: unset).
func (p *parser) labelValue(name string) string {
	v := p.str(name, "")
	if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
		p.fail("%s=%q: must be a label value: %s", name, v, strings.Join(errs, "; "))
		return ""
	}
	return v
}

// list reads a comma-separated list; empty items are dropped.
func (p *parser) list(name string) []string {
	var out []string
	for _, item := range strings.Split(p.str(name, ""), ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// absPaths reads a comma-separated list of absolute paths, cleaned.
func (p *parser) absPaths(name string) []string {
	var out []string
	for _, item := range p.list(name) {
		if !path.IsAbs(item) {
			p.fail("%s: %q is not an absolute path", name, item)
			continue
		}
		out = append(out, path.Clean(item))
	}
	return out
}

// addr accepts host:port, :port, or "0" (disabled) where allowed.
func (p *parser) addr(name, def string, mayDisable bool) string {
	v := p.str(name, def)
	if v == "0" && mayDisable {
		return v
	}
	if _, port, err := net.SplitHostPort(v); err != nil || port == "" {
		hint := "host:port or :port"
		if mayDisable {
			hint += ", or 0 to disable"
		}
		p.fail("%s=%q: must be %s", name, v, hint)
		return def
	}
	return v
}

func (p *parser) quantity(name, def string) resource.Quantity {
	v := p.str(name, def)
	q, err := resource.ParseQuantity(v)
	if err != nil || q.Sign() <= 0 {
		p.fail("%s=%q: must be a positive Kubernetes quantity such as 500m or 1Gi", name, v)
		return resource.MustParse(def)
	}
	return q
}
