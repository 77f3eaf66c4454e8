package config

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
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

	// MaxConcurrentReconciles is the number of jobs reconciled in parallel.
	MaxConcurrentReconciles int
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
			Image:          p.str(EnvWorkerImage, DefaultWorkerImage),
			PullPolicy:     corev1.PullPolicy(p.oneOf(EnvWorkerPullPolicy, string(DefaultWorkerPullPolicy), "Always", "IfNotPresent", "Never")),
			ServiceAccount: p.str(EnvWorkerServiceAccount, ""),
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
		MaxConcurrentReconciles: p.integer(EnvMaxConcurrentReconciles, DefaultMaxConcurrentReconciles, 1, 1000),
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
