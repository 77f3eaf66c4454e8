package config

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/vmafx/vmafx/internal/cli"
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
	// Attempts are the attempt engine's settings, for every reconciler whose Pods go
	// through it (jobs and ladders).
	Attempts

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

// Attempts are the operator's settings of the attempt engine (operator/internal/attempt):
// one set for every reconciler whose Pods go through it, handed over whole.
type Attempts struct {
	// RetryBackoff is the wait before the second attempt of a failed job; it doubles for
	// each further failure, up to MaxRetryBackoff.
	RetryBackoff    time.Duration
	MaxRetryBackoff time.Duration
	// PendingDeadline is the default of spec.pendingDeadlineSeconds; 0: none.
	PendingDeadline time.Duration
	// PodStartTimeout bounds how long a worker Pod bound to a node may take to start its
	// container (image pull, volume mount, Secret lookup) before the attempt fails.
	PodStartTimeout time.Duration
	// TerminatingTimeout bounds how long a deleted worker Pod may stay Terminating (a node
	// that went away with it) before the attempt counts as lost and the Pod is force-deleted.
	TerminatingTimeout time.Duration
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
	// DefaultCredentials lets the worker of a job that names no Secret use the object
	// storage SDKs' default credentials: the node's instance metadata or the worker
	// ServiceAccount's workload identity, rights no job author was given. Off: anonymous.
	DefaultCredentials bool
	// TrainerServiceAccount runs trainer Pods; it needs to read VmafxJobs and Nodes.
	TrainerServiceAccount string
	// TrainerImage is the image of the trainer Pods (vmafx-trainer).
	TrainerImage      string
	TrainerPullPolicy corev1.PullPolicy
	// KueueQueueName, when set, is the Kueue LocalQueue that worker Pods are submitted to
	// (the label kueue.x-k8s.io/queue-name), unless the job names its own in that label.
	KueueQueueName string
}

// VolumePolicy says which node-level volume sources a VmafxJob may mount. A job's volume
// becomes a worker Pod's volume, created with the operator's permissions, so a hostPath,
// an NFS export or an inline CSI volume is the operator's to allow, not the job author's.
// PVCs (bound by the cluster's own storage rules) are always allowed, read-only.
type VolumePolicy struct {
	// HostPaths are the absolute path prefixes a hostPath volume may name (a path matches
	// a prefix when it is the prefix or lies below it).
	HostPaths []string
	// NFSServers are the NFS servers an nfs volume may name; "*" allows any.
	NFSServers []string
	// CSIDrivers are the CSI drivers an inline csi volume may name; empty: none. An inline
	// volume hands its attributes to the driver with the operator's rights (an NFS or SMB
	// driver mounts any share it is told), so each driver is allowed by name, no wildcard.
	CSIDrivers []string
}

// Lookup returns an environment variable and whether it is set.
type Lookup = cli.Lookup

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
	EnvAllowedCSIDrivers       = "VMAFX_OPERATOR_ALLOWED_CSI_DRIVERS"
	EnvNamespace               = "VMAFX_OPERATOR_NAMESPACE"
	EnvUnhealthyThreshold      = "VMAFX_OPERATOR_UNHEALTHY_THRESHOLD"
	EnvPendingDeadline         = "VMAFX_OPERATOR_PENDING_DEADLINE"
	EnvPodStartTimeout         = "VMAFX_OPERATOR_POD_START_TIMEOUT"
	EnvTerminatingTimeout      = "VMAFX_OPERATOR_TERMINATING_TIMEOUT"
	EnvTTLAfterFinished        = "VMAFX_OPERATOR_TTL_AFTER_FINISHED"
	EnvPlainHTTPRegistries     = "VMAFX_OPERATOR_PLAIN_HTTP_REGISTRIES"
	EnvTrainerServiceAccount   = "VMAFX_OPERATOR_TRAINER_SERVICE_ACCOUNT"
	EnvTrainerImage            = "VMAFX_OPERATOR_TRAINER_IMAGE"
	EnvTrainerPullPolicy       = "VMAFX_OPERATOR_TRAINER_PULL_POLICY"
	EnvMaxWorkersPerNamespace  = "VMAFX_OPERATOR_MAX_WORKERS_PER_NAMESPACE"
	EnvKueueQueueName          = "VMAFX_OPERATOR_KUEUE_QUEUE_NAME"
	EnvWorkerDefaultCreds      = "VMAFX_OPERATOR_WORKER_DEFAULT_CREDENTIALS"
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
	DefaultTrainerImage            = "vmafx-trainer:dev"
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

// Summary is the first paragraph of vmafx-operator --help.
const Summary = `vmafx-operator runs the VMAFX operator: the VmafxJob, VmafxNode, VmafxModelTraining,
VmafxComparison and VmafxLadder reconcilers (docs/operator.md).`

// Flags binds the operator's settings to c: each a flag with its environment variable twin.
func Flags(c *Config) *cli.Set {
	s := cli.New("vmafx-operator", Summary)
	s.Addr(&c.MetricsAddr, "metrics-addr", EnvMetricsAddr, DefaultMetricsAddr, true, "serve Prometheus metrics on this address")
	s.Addr(&c.HealthProbeAddr, "health-probe-addr", EnvHealthProbeAddr, DefaultHealthProbeAddr, false, "serve /healthz and /readyz on this address")
	s.Bool(&c.LeaderElection, "leader-election", EnvLeaderElection, false, "elect one active replica through a Lease")
	s.String(&c.LeaderElectionID, "leader-election-id", EnvLeaderElectionID, DefaultLeaderElectionID, "name of the leader election Lease")
	s.String(&c.LeaderElectionNamespace, "leader-election-namespace", EnvLeaderElectionNamespace, "", "namespace of the Lease; empty: the operator's own")
	s.Int(&c.WebhookPort, "webhook-port", EnvWebhookPort, 0, 0, 65535, "admission webhook port; must stay 0 (the CRDs validate every field)")
	s.String(&c.WebhookHost, "webhook-host", EnvWebhookHost, "", "admission webhook bind address")
	s.Duration(&c.GracefulShutdown, "graceful-shutdown", EnvGracefulShutdown, DefaultGracefulShutdown, "how long running reconciles may take to finish on SIGTERM")
	s.OneOf(&c.LogLevel, "log-level", EnvLogLevel, DefaultLogLevel, "log level, JSON lines on stderr", "debug", "info", "warn", "error")
	s.Duration(&c.NodeStaleAfter, "node-stale-after", EnvNodeStaleAfter, DefaultNodeStaleAfter, "how old a VmafxNode heartbeat may be before the node is unhealthy")
	s.Duration(&c.RetryBackoff, "retry-backoff", EnvRetryBackoff, DefaultRetryBackoff, "wait before the second attempt of a failed job; doubles per failure")
	s.Duration(&c.MaxRetryBackoff, "max-retry-backoff", EnvMaxRetryBackoff, DefaultMaxRetryBackoff, "longest wait between attempts")
	s.NonEmpty(&c.Worker.Image, "worker-image", EnvWorkerImage, DefaultWorkerImage, "image of the worker Pods")
	s.Func("worker-pull-policy", EnvWorkerPullPolicy, string(DefaultWorkerPullPolicy), "worker image pull policy (Always, IfNotPresent, Never)", pullPolicy(&c.Worker.PullPolicy))
	s.String(&c.Worker.ServiceAccount, "worker-service-account", EnvWorkerServiceAccount, "", "service account of the worker Pods (its token is never mounted)")
	s.Bool(&c.Worker.DefaultCredentials, "worker-default-credentials", EnvWorkerDefaultCreds, false, "let a job that names no Secret read and write object storage with the SDKs' default credentials (instance metadata, the worker service account's workload identity) instead of anonymously: every job author then acts with those rights (docs/security.md)")
	s.List(&c.Worker.PlainHTTPRegistries, "plain-http-registries", EnvPlainHTTPRegistries, "OCI registries (host[:port]) that workers (for oci:// models) and trainers reach over plain HTTP, e.g. an in-cluster registry without TLS")
	s.NonEmpty(&c.Worker.TrainerImage, "trainer-image", EnvTrainerImage, DefaultTrainerImage, "image of the trainer Pods of training runs (vmafx-trainer)")
	s.Func("trainer-pull-policy", EnvTrainerPullPolicy, string(DefaultWorkerPullPolicy), "trainer image pull policy (Always, IfNotPresent, Never)", pullPolicy(&c.Worker.TrainerPullPolicy))
	s.String(&c.Worker.TrainerServiceAccount, "trainer-service-account", EnvTrainerServiceAccount, DefaultTrainerServiceAccount, "the account trainer Pods run as; it must exist in the run's namespace (docs/training.md)")
	c.Worker.Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
	for _, r := range []struct {
		flag, env, def string
		list           corev1.ResourceList
		name           corev1.ResourceName
	}{
		{"worker-cpu-request", EnvWorkerCPURequest, DefaultWorkerCPURequest, c.Worker.Resources.Requests, corev1.ResourceCPU},
		{"worker-cpu-limit", EnvWorkerCPULimit, DefaultWorkerCPULimit, c.Worker.Resources.Limits, corev1.ResourceCPU},
		{"worker-memory-request", EnvWorkerMemoryRequest, DefaultWorkerMemoryRequest, c.Worker.Resources.Requests, corev1.ResourceMemory},
		{"worker-memory-limit", EnvWorkerMemoryLimit, DefaultWorkerMemoryLimit, c.Worker.Resources.Limits, corev1.ResourceMemory},
	} {
		s.TypedFunc("quantity", r.flag, r.env, r.def, "worker container "+strings.ReplaceAll(r.flag[len("worker-"):], "-", " "), func(v string) error {
			q, err := resource.ParseQuantity(v)
			if err != nil || q.Sign() <= 0 {
				return errors.New("must be a positive Kubernetes quantity such as 500m or 1Gi")
			}
			r.list[r.name] = q
			return nil
		})
	}
	s.AbsPaths(&c.Volumes.HostPaths, "allowed-host-paths", EnvAllowedHostPaths, "path prefixes a job's hostPath volume may name (see Volumes below)")
	s.List(&c.Volumes.NFSServers, "allowed-nfs-servers", EnvAllowedNFSServers, "NFS servers a job's nfs volume may name; * allows any")
	s.List(&c.Volumes.CSIDrivers, "allowed-csi-drivers", EnvAllowedCSIDrivers, "CSI drivers a job's or ladder's inline csi volume may name, each by name (no wildcard)")
	s.NonEmpty(&c.Namespace, "namespace", EnvNamespace, DefaultNamespace, "the operator's own namespace, the only one whose VmafxNodes count")
	s.Fraction(&c.UnhealthyThreshold, "unhealthy-threshold", EnvUnhealthyThreshold, DefaultUnhealthyThreshold, "share of stale VmafxNodes at which the operator stops moving jobs")
	s.DurationOrZero(&c.PendingDeadline, "pending-deadline", EnvPendingDeadline, 0, "default of spec.pendingDeadlineSeconds; 0: none")
	s.Duration(&c.PodStartTimeout, "pod-start-timeout", EnvPodStartTimeout, DefaultPodStartTimeout, "how long a bound worker Pod may take to start its container")
	s.Duration(&c.TerminatingTimeout, "terminating-timeout", EnvTerminatingTimeout, DefaultTerminatingTimeout, "how long a deleted worker Pod may stay Terminating before the attempt counts as lost")
	s.TypedFunc("duration", "ttl-after-finished", EnvTTLAfterFinished, DefaultTTLAfterFinished.String(), "default of spec.ttlSecondsAfterFinished: a duration, 0 (at once) or never", func(v string) error {
		if v == "never" {
			c.TTLAfterFinished = -1
			return nil
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return errors.New("must be never, 0 (at once) or a positive duration such as 24h")
		}
		c.TTLAfterFinished = d
		return nil
	})
	s.Int(&c.MaxWorkersPerNamespace, "max-workers-per-namespace", EnvMaxWorkersPerNamespace, 0, 0, 1000000, "live worker Pods a namespace may have at once; jobs beyond wait in priority order; 0: no limit (docs/fairness.md)")
	s.Func("kueue-queue-name", EnvKueueQueueName, "", "Kueue LocalQueue put on every worker Pod as kueue.x-k8s.io/queue-name (a job's own label wins); empty: only jobs that carry the label", func(v string) error {
		if errs := validation.IsValidLabelValue(v); v != "" && len(errs) > 0 {
			return errors.New("must be a valid label value: " + strings.Join(errs, "; "))
		}
		c.Worker.KueueQueueName = v
		return nil
	})
	s.Int(&c.MaxConcurrentReconciles, "max-concurrent-reconciles", EnvMaxConcurrentReconciles, DefaultMaxConcurrentReconciles, 1, 1000, "jobs reconciled in parallel")
	s.TypedFunc("int", "kube-api-qps", EnvKubeAPIQPS, strconv.Itoa(DefaultKubeAPIQPS), "client-side rate limit: requests per second to the API server", func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100000 {
			return errors.New("must be a whole number from 1 to 100000")
		}
		c.KubeAPIQPS = float32(n)
		return nil
	})
	s.Int(&c.KubeAPIBurst, "kube-api-burst", EnvKubeAPIBurst, DefaultKubeAPIBurst, 1, 100000, "burst of requests to the API server")
	return s
}

// Load reads the configuration from the environment alone (os.LookupEnv in the binary);
// every invalid variable is reported together.
func Load(lookup Lookup) (*Config, error) { return Parse(nil, lookup, io.Discard) }

// Parse reads the command line and the environment: a flag wins over its variable. It
// returns cli.ErrHelp after writing --help to help.
func Parse(args []string, lookup Lookup, help io.Writer) (*Config, error) {
	c := &Config{}
	if err := Flags(c).Parse(args, lookup, help); err != nil {
		return nil, err
	}
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, lim := c.Worker.Resources.Requests[r], c.Worker.Resources.Limits[r]
		if req.Cmp(lim) > 0 {
			fail("VMAFX_OPERATOR_WORKER_%s_REQUEST (--worker-%s-request) %s exceeds its limit %s", strings.ToUpper(string(r)), r, req.String(), lim.String())
		}
	}
	if c.MaxRetryBackoff < c.RetryBackoff {
		fail("%s (%s) is shorter than %s (%s)", EnvMaxRetryBackoff, c.MaxRetryBackoff, EnvRetryBackoff, c.RetryBackoff)
	}
	if c.WebhookPort != 0 {
		// CRD validation (OpenAPI and CEL) refuses bad objects without a webhook; a
		// webhook server would only add a TLS certificate to manage.
		fail("%s=%d (--webhook-port): admission webhooks are not built into this release (the CRDs validate every field); leave it 0", EnvWebhookPort, c.WebhookPort)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("invalid vmafx-operator configuration: %w", err)
	}
	return c, nil
}

// pullPolicy parses an image pull policy into p.
func pullPolicy(p *corev1.PullPolicy) func(string) error {
	return func(v string) error {
		switch corev1.PullPolicy(v) {
		case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
			*p = corev1.PullPolicy(v)
			return nil
		}
		return errors.New("must be one of Always, IfNotPresent, Never")
	}
}
