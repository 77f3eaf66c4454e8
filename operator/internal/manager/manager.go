package manager

import (
	"context"
	"fmt"
	"net/http"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/version"
	"github.com/vmafx/vmafx/operator/internal/attempt"
	"github.com/vmafx/vmafx/operator/internal/config"
	"github.com/vmafx/vmafx/operator/internal/controller/comparison"
	"github.com/vmafx/vmafx/operator/internal/controller/job"
	"github.com/vmafx/vmafx/operator/internal/controller/ladder"
	"github.com/vmafx/vmafx/operator/internal/controller/node"
	"github.com/vmafx/vmafx/operator/internal/controller/training"
	"github.com/vmafx/vmafx/operator/internal/labelindex"
	"github.com/vmafx/vmafx/operator/internal/metrics"
)

// Leader election and the events it writes.
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete,namespace=vmafx-system
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Name is the operator's name in events and the manager.
const Name = "vmafx-operator"

// Options are settings that only embedders (tests) change.
type Options struct {
	// Clock is what the reconcilers judge time by; nil means the real clock.
	Clock clock.Clock
	// SkipNameValidation lets several managers run in one process, as tests do.
	SkipNameValidation bool
	// TrainerFollow, when set, replaces reading a trainer Pod's /status over HTTP (tests
	// without a kubelet have no trainer Pods to reach).
	TrainerFollow func(ctx context.Context, pod *corev1.Pod) (*vmafxv1.TrainerStatus, error)
}

// New returns the operator's manager for the API server at restConfig.
func New(restConfig *rest.Config, cfg *config.Config, opts Options) (ctrl.Manager, error) {
	clk := opts.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	restConfig = rest.CopyConfig(restConfig)
	restConfig.QPS, restConfig.Burst = cfg.KubeAPIQPS, cfg.KubeAPIBurst
	restConfig.UserAgent = Name

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := vmafxv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	// The operator only ever looks at worker Pods: caching just those keeps its memory
	// flat in a cluster with many other Pods.
	workerPods, err := labels.NewRequirement(vmafxv1.LabelJob, selection.Exists, nil)
	if err != nil {
		return nil, err
	}
	gracefulShutdown := cfg.GracefulShutdown
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                        scheme,
		Metrics:                       metricsserver.Options{BindAddress: cfg.MetricsAddr},
		HealthProbeBindAddress:        cfg.HealthProbeAddr,
		LeaderElection:                cfg.LeaderElection,
		LeaderElectionID:              cfg.LeaderElectionID,
		LeaderElectionNamespace:       cfg.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		GracefulShutdownTimeout:       &gracefulShutdown,
		Controller:                    ctrlconfig.Controller{SkipNameValidation: &opts.SkipNameValidation},
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}: {Label: labels.NewSelector().Add(*workerPods)},
			// Only the operator's own namespace holds VmafxNodes that count: one elsewhere,
			// which anyone with rights in some namespace could write, must not make the
			// operator move another node's workers.
			&vmafxv1.VmafxNode{}: {Namespaces: map[string]cache.Config{cfg.Namespace: {}}},
			// The node heartbeat Leases beside them, for the same reason.
			&coordinationv1.Lease{}: node.LeaseCache(cfg.Namespace),
			// Trainer Deployments only, not every Deployment of the cluster.
			&appsv1.Deployment{}: {Label: labels.SelectorFromSet(labels.Set{vmafxv1.LabelComponent: "trainer"})},
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	if err := setupIndexes(mgr); err != nil {
		return nil, err
	}
	ladderPods, err := newLadderPodCache(restConfig, mgr)
	if err != nil {
		return nil, err
	}
	if err := setupReconcilers(mgr, cfg, clk, opts, ladderPods); err != nil {
		return nil, err
	}
	if err := setupChecks(mgr); err != nil {
		return nil, err
	}
	return mgr, nil
}

func setupIndexes(mgr ctrl.Manager) error {
	ctx := context.Background()
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &corev1.Pod{}, node.IndexPodNode, func(o client.Object) []string {
		return []string{o.(*corev1.Pod).Spec.NodeName}
	}); err != nil {
		return fmt.Errorf("indexing Pods by node: %w", err)
	}
	if err := idx.IndexField(ctx, &vmafxv1.VmafxNode{}, node.IndexVmafxNodeName, func(o client.Object) []string {
		return []string{o.(*vmafxv1.VmafxNode).KubernetesNodeName()}
	}); err != nil {
		return fmt.Errorf("indexing VmafxNodes by node name: %w", err)
	}
	// The children of each job, comparison and ladder, listed on every reconcile.
	for _, by := range []struct {
		obj client.Object
		key string
	}{{&corev1.Pod{}, vmafxv1.LabelJob}, {&vmafxv1.VmafxJob{}, vmafxv1.LabelComparison}, {&vmafxv1.VmafxJob{}, vmafxv1.LabelLadder}} {
		if err := labelindex.Register(ctx, idx, by.obj, by.key); err != nil {
			return fmt.Errorf("indexing %T by label %s: %w", by.obj, by.key, err)
		}
	}
	return nil
}

// newLadderPodCache returns a second Pod cache, of the encode and report Pods of
// VmafxLadders (labelled vmafx.dev/ladder): a label selector cannot say "vmafx.dev/job
// or vmafx.dev/ladder", and the worker Pod cache must stay as narrow as it is.
func newLadderPodCache(restConfig *rest.Config, mgr ctrl.Manager) (cache.Cache, error) {
	sel, err := labels.NewRequirement(vmafxv1.LabelLadder, selection.Exists, nil)
	if err != nil {
		return nil, err
	}
	c, err := cache.New(restConfig, cache.Options{
		Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(), HTTPClient: mgr.GetHTTPClient(),
		ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Label: labels.NewSelector().Add(*sel)}},
	})
	if err != nil {
		return nil, fmt.Errorf("creating the ladder Pod cache: %w", err)
	}
	if err := labelindex.Register(context.Background(), c, &corev1.Pod{}, vmafxv1.LabelLadder); err != nil {
		return nil, fmt.Errorf("indexing ladder Pods by ladder: %w", err)
	}
	if err := mgr.Add(c); err != nil {
		return nil, err
	}
	return c, nil
}

func setupReconcilers(mgr ctrl.Manager, cfg *config.Config, clk clock.Clock, opts Options, ladderPods cache.Cache) error {
	jobMetrics := metrics.NewJobs()
	metrics.Register(jobMetrics.Collectors()...)
	metrics.Register(metrics.NewPhaseCollector(mgr.GetClient()), version.Collector())
	recorder := mgr.GetEventRecorder(Name)
	// One limit for the jobs' worker Pods and the ladders' Pods alike.
	limit := attempt.NewNamespaceLimit(cfg.MaxWorkersPerNamespace, ladderPods)
	if limit != nil {
		// The limit counts through indexes of its own (live Pods, waiting jobs), kept only
		// when it is on.
		if err := attempt.RegisterIndexes(context.Background(), mgr.GetFieldIndexer()); err != nil {
			return fmt.Errorf("indexing for the namespace limit: %w", err)
		}
		if err := attempt.RegisterPodIndex(context.Background(), ladderPods); err != nil {
			return fmt.Errorf("indexing ladder Pods for the namespace limit: %w", err)
		}
	}
	if err := (&job.Reconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: recorder, Clock: clk, Metrics: jobMetrics,
		Worker: cfg.Worker, Volumes: cfg.Volumes, Attempts: cfg.Attempts,
		TTLAfterFinished: cfg.TTLAfterFinished, MaxConcurrentReconciles: cfg.MaxConcurrentReconciles,
		MaxWorkersPerNamespace: cfg.MaxWorkersPerNamespace, Limit: limit, LadderPods: ladderPods,
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the VmafxJob reconciler: %w", err)
	}
	if err := (&comparison.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: recorder}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the VmafxComparison reconciler: %w", err)
	}
	if err := (&ladder.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Pods: ladderPods, Recorder: recorder, Worker: cfg.Worker, Volumes: cfg.Volumes,
		Limit: limit, Attempts: cfg.Attempts}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the VmafxLadder reconciler: %w", err)
	}
	contact := &node.Connectivity{Reader: mgr.GetAPIReader(), Namespace: cfg.Namespace, Clock: clk, Interval: node.ProbeInterval(cfg.NodeStaleAfter)}
	if err := mgr.Add(contact); err != nil {
		return err
	}
	if err := (&node.Reconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: recorder, Clock: clk, StaleAfter: cfg.NodeStaleAfter,
		UnhealthyThreshold: cfg.UnhealthyThreshold, Contact: contact, WorkerImage: cfg.Worker.Image,
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the VmafxNode reconciler: %w", err)
	}
	if err := (&training.Reconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: recorder, Worker: cfg.Worker, Follow: opts.TrainerFollow,
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the VmafxModelTraining reconciler: %w", err)
	}
	return nil
}

func setupChecks(mgr ctrl.Manager) error {
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	// Ready once the caches have synced: before that the operator would act on nothing.
	return mgr.AddReadyzCheck("caches", func(req *http.Request) error {
		if !mgr.GetCache().WaitForCacheSync(req.Context()) {
			return fmt.Errorf("caches not synced")
		}
		return nil
	})
}
