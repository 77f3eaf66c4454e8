package scheduler

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	utilcompatibility "k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/component-base/compatibility"
	"k8s.io/component-base/configz"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/scheduler-plugin/plugins"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// schedulerSA is vmafx-scheduler's ServiceAccount as shipped, which the tests run as.
const schedulerSA = "vmafx-scheduler"

func manifestPath(parts ...string) string {
	return filepath.Join(append([]string{testenv.RepoRoot(), "manifests"}, parts...)...)
}

var installOnce sync.Once

// installRBAC creates the system namespace and applies the scheduler's ServiceAccount and
// RBAC exactly as shipped (manifests/default/vmafx-scheduler.yaml, rendered from the
// chart; its Deployment stays inert, as no controller runs here), once per package run.
func installRBAC(t testing.TB) {
	t.Helper()
	var err error
	installOnce.Do(func() {
		ctx := context.Background()
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: vmafxv1.SystemNamespace}}
		if err = testenv.Client().Create(ctx, ns); apierrors.IsAlreadyExists(err) {
			err = nil
		}
		if err == nil {
			err = testenv.ApplyFile(ctx, manifestPath("default", "vmafx-scheduler.yaml"))
		}
	})
	if err != nil {
		t.Fatalf("installing the scheduler's RBAC: %v", err)
	}
}

// kubeconfigForSA writes a kubeconfig that authenticates as the scheduler's ServiceAccount
// with a token from the TokenRequest API, so the scheduler has exactly the RBAC shipped.
func kubeconfigForSA(t testing.TB) string {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(testenv.Config())
	tr, err := cs.CoreV1().ServiceAccounts(vmafxv1.SystemNamespace).CreateToken(context.Background(), schedulerSA,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("requesting a token for %s: %v", schedulerSA, err)
	}
	cfg := testenv.Config()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[schedulerSA] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts[schedulerSA] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: schedulerSA}
	kc.CurrentContext = schedulerSA
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// schedulerConfig returns the shipped KubeSchedulerConfiguration as a map, with
// clientConnection pointed at the test API server as the scheduler's ServiceAccount.
func schedulerConfig(t testing.TB) map[string]any {
	t.Helper()
	data, err := os.ReadFile(manifestPath("helm", "vmafx", "files", "scheduler-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["clientConnection"] = map[string]any{"kubeconfig": kubeconfigForSA(t)}
	return cfg
}

// startScheduler runs the scheduler in-process, built as the vmafx-scheduler command builds
// it, from cfg and extra command-line flags, until the test ends.
func startScheduler(t testing.TB, cfg map[string]any, flags ...string) *inProcessScheduler {
	t.Helper()
	return startSchedulerLogging(t, 2, cfg, flags...)
}

// inProcessScheduler is a scheduler started by startScheduler.
type inProcessScheduler struct {
	stopOnce sync.Once
	stop     func()
}

// Stop stops the scheduler and waits for it to finish; the test's end does the same.
func (s *inProcessScheduler) Stop() { s.stopOnce.Do(s.stop) }

// startSchedulerLogging is startScheduler with the scheduler's log verbosity (its log goes
// to the test log; a negative verbosity discards it).
func startSchedulerLogging(t testing.TB, verbosity int, cfg map[string]any, flags ...string) *inProcessScheduler {
	t.Helper()
	installRBAC(t)
	data, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfgPath, data, 0o600); err != nil {
		t.Fatal(err)
	}

	opts := options.NewOptions()
	// A registry of its own per scheduler, as kube-scheduler's test server does, so that
	// starting several schedulers in one process does not set global feature gates twice.
	featureGate := utilfeature.DefaultMutableFeatureGate.DeepCopy()
	version := utilcompatibility.DefaultKubeEffectiveVersionForTest()
	version.SetEmulationVersion(featureGate.EmulationVersion())
	version.SetMinCompatibilityVersion(featureGate.MinCompatibilityVersion())
	registry := compatibility.NewComponentGlobalsRegistry()
	if err := registry.Register(compatibility.DefaultKubeComponent, version, featureGate); err != nil {
		t.Fatal(err)
	}
	opts.ComponentGlobalsRegistry = registry
	fs := pflag.NewFlagSet("vmafx-scheduler", pflag.ContinueOnError)
	for _, f := range opts.Flags.FlagSets {
		fs.AddFlagSet(f)
	}
	// No HTTPS endpoint: tests do not need one, and several schedulers would share a port.
	if err := fs.Parse(append([]string{"--config=" + cfgPath, "--secure-port=0"}, flags...)); err != nil {
		t.Fatal(err)
	}
	if err := opts.ComponentGlobalsRegistry.Set(); err != nil {
		t.Fatal(err)
	}

	logger := logr.Discard()
	if verbosity >= 0 {
		logger = ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(verbosity)))
	}
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	cc, sched, err := app.Setup(ctx, opts, plugins.Options()...)
	if err != nil {
		cancel()
		t.Fatalf("setting up vmafx-scheduler: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = app.Run(ctx, cc, sched) // returns when ctx ends
	}()
	s := &inProcessScheduler{stop: func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Errorf("vmafx-scheduler did not stop within 30 s")
		}
		configz.Delete("componentconfig")
	}}
	t.Cleanup(s.Stop)
	return s
}

// cluster is one test's share of the API server: its namespace, and the Nodes and
// VmafxNodes it made (removed when the test ends, since every scheduler sees them all).
type cluster struct {
	t      testing.TB
	ctx    context.Context
	c      client.Client
	ns     string
	prefix string
}

func newCluster(t testing.TB) *cluster {
	t.Helper()
	installRBAC(t)
	cl := &cluster{t: t, ctx: testenv.Context(t), c: testenv.Client(), ns: testenv.CreateNamespace(t)}
	cl.prefix = strings.TrimPrefix(cl.ns, "vmafx-test-") + "-"
	t.Cleanup(cl.cleanup)
	return cl
}

func (cl *cluster) cleanup() {
	ctx := context.Background()
	// Pods first, so that no leftover pending Pod lands on a later test's nodes. Without a
	// kubelet, a zero grace period removes a Pod at once.
	if err := cl.c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(cl.ns), client.GracePeriodSeconds(0)); err != nil {
		cl.t.Errorf("deleting pods: %v", err)
	}
	var vns vmafxv1.VmafxNodeList
	if err := cl.c.List(ctx, &vns, client.InNamespace(vmafxv1.SystemNamespace)); err == nil {
		for i := range vns.Items {
			if strings.HasPrefix(vns.Items[i].Name, cl.prefix) {
				_ = cl.c.Delete(ctx, &vns.Items[i])
			}
		}
	}
	// Their heartbeat Leases too: no garbage collector runs here to follow the owners.
	var leases coordinationv1.LeaseList
	if err := cl.c.List(ctx, &leases, client.InNamespace(vmafxv1.SystemNamespace)); err == nil {
		for i := range leases.Items {
			if strings.HasPrefix(leases.Items[i].Name, vmafxv1.NodeLeasePrefix+cl.prefix) {
				_ = cl.c.Delete(ctx, &leases.Items[i])
			}
		}
	}
	var nodes corev1.NodeList
	if err := cl.c.List(ctx, &nodes); err == nil {
		for i := range nodes.Items {
			if strings.HasPrefix(nodes.Items[i].Name, cl.prefix) {
				_ = cl.c.Delete(ctx, &nodes.Items[i])
			}
		}
	}
}

// name prefixes a node name with the test's own prefix.
func (cl *cluster) name(node string) string { return cl.prefix + node }

// node creates a Node offering slots vmafx.dev/slot (and plenty of CPU and memory).
func (cl *cluster) node(name string, slots int) string {
	cl.t.Helper()
	full, err := cl.createNode(name, slots)
	if err != nil {
		cl.t.Fatal(err)
	}
	return full
}

func (cl *cluster) createNode(name string, slots int) (string, error) {
	full := cl.name(name)
	resources := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("16"),
		corev1.ResourceMemory: resource.MustParse("64Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	if slots >= 0 {
		resources[vmafxv1.ResourceSlot] = *resource.NewQuantity(int64(slots), resource.DecimalSI)
	}
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: full, Labels: map[string]string{corev1.LabelHostname: full}},
		Status: corev1.NodeStatus{
			Capacity: resources, Allocatable: resources,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
	if err := cl.c.Create(cl.ctx, n); err != nil {
		return "", fmt.Errorf("creating node %s: %w", full, err)
	}
	// The API server's TaintNodesByCondition admission taints every new Node not-ready
	// until a node controller sees its kubelet; none runs here, so lift the taint as it would.
	n.Spec.Taints = nil
	if err := cl.c.Update(cl.ctx, n); err != nil {
		return "", fmt.Errorf("untainting node %s: %w", full, err)
	}
	return full, nil
}

// vmafxNode creates the VmafxNode of node (already prefixed), with a heartbeat at hb
// unless hb is zero.
func (cl *cluster) vmafxNode(node string, vendor vmafxv1.GPUVendor, hb time.Time) {
	cl.t.Helper()
	if err := cl.createVmafxNode(node, vendor, hb); err != nil {
		cl.t.Fatal(err)
	}
}

func (cl *cluster) createVmafxNode(node string, vendor vmafxv1.GPUVendor, hb time.Time) error {
	vn := &vmafxv1.VmafxNode{
		ObjectMeta: metav1.ObjectMeta{Namespace: vmafxv1.SystemNamespace, Name: node},
		Spec:       vmafxv1.VmafxNodeSpec{NodeName: node, GPUVendor: vendor, Capacity: 4},
	}
	if err := cl.c.Create(cl.ctx, vn); err != nil {
		return fmt.Errorf("creating VmafxNode %s: %w", node, err)
	}
	if hb.IsZero() {
		return nil
	}
	return cl.beat(node, hb)
}

// heartbeat renews the node's heartbeat Lease as its device plugin does.
func (cl *cluster) heartbeat(node string, hb time.Time) {
	cl.t.Helper()
	if err := cl.beat(node, hb); err != nil {
		cl.t.Fatal(err)
	}
}

// beat is heartbeat for any goroutine: the Lease's renewTime set to hb, the Lease created
// the first time.
func (cl *cluster) beat(node string, hb time.Time) error {
	name, _ := vmafxv1.NodeLeaseName(node)
	lease := &coordinationv1.Lease{}
	err := cl.c.Get(cl.ctx, client.ObjectKey{Namespace: vmafxv1.SystemNamespace, Name: name}, lease)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("heartbeat of %s: %w", node, err)
	}
	lease.Spec.HolderIdentity = &node
	lease.Spec.RenewTime = &metav1.MicroTime{Time: hb}
	if apierrors.IsNotFound(err) {
		lease.ObjectMeta = metav1.ObjectMeta{Namespace: vmafxv1.SystemNamespace, Name: name,
			Labels: map[string]string{vmafxv1.LabelComponent: vmafxv1.ComponentNodeHeartbeat}}
		err = cl.c.Create(cl.ctx, lease)
	} else {
		err = cl.c.Update(cl.ctx, lease)
	}
	if err != nil {
		return fmt.Errorf("heartbeat of %s: %w", node, err)
	}
	return nil
}

// statusHeartbeat writes status.lastHeartbeat alone, as a device plugin of the release
// before the Leases does.
func (cl *cluster) statusHeartbeat(node string, hb time.Time) {
	cl.t.Helper()
	patch := fmt.Appendf(nil, `{"status":{"lastHeartbeat":%q}}`, hb.UTC().Format(time.RFC3339))
	vn := &vmafxv1.VmafxNode{ObjectMeta: metav1.ObjectMeta{Namespace: vmafxv1.SystemNamespace, Name: node}}
	if err := cl.c.Status().Patch(cl.ctx, vn, client.RawPatch(types.MergePatchType, patch)); err != nil {
		cl.t.Fatalf("status heartbeat of %s: %v", node, err)
	}
}

// workerPod creates a worker Pod as the operator does: schedulerName vmafx-scheduler, one
// vmafx.dev/slot, and the backend annotation (none when backend is empty).
func (cl *cluster) workerPod(name, backend string, annotations map[string]string) *corev1.Pod {
	cl.t.Helper()
	pod := newWorkerPod(cl.ns, name, backend, annotations)
	if err := cl.c.Create(cl.ctx, pod); err != nil {
		cl.t.Fatalf("creating pod %s: %v", name, err)
	}
	return pod
}

func newWorkerPod(ns, name, backend string, annotations map[string]string) *corev1.Pod {
	ann := map[string]string{}
	for k, v := range annotations {
		ann[k] = v
	}
	if backend != "" {
		ann[vmafxv1.AnnotationBackend] = backend
	}
	slot := corev1.ResourceList{vmafxv1.ResourceSlot: resource.MustParse("1")}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: ann, Labels: map[string]string{vmafxv1.LabelJob: name}},
		Spec: corev1.PodSpec{
			SchedulerName: vmafxv1.SchedulerName,
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "worker", Image: "vmafx-worker:test",
				Resources: corev1.ResourceRequirements{Limits: slot, Requests: slot},
			}},
		},
	}
}

// nodeOf returns the node a Pod is bound to, or "".
func (cl *cluster) nodeOf(name string) string {
	var pod corev1.Pod
	if err := cl.c.Get(cl.ctx, client.ObjectKey{Namespace: cl.ns, Name: name}, &pod); err != nil {
		cl.t.Fatalf("getting pod %s: %v", name, err)
	}
	return pod.Spec.NodeName
}

// waitScheduled waits for a Pod to be bound and returns its node.
func (cl *cluster) waitScheduled(name string, timeout time.Duration) string {
	cl.t.Helper()
	var node string
	err := wait.PollUntilContextTimeout(cl.ctx, 20*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		node = cl.nodeOf(name)
		return node != "", nil
	})
	if err != nil {
		cl.t.Fatalf("pod %s not scheduled within %v", name, timeout)
	}
	return node
}

// waitEvent waits for a FailedScheduling event of the Pod and returns its message.
func (cl *cluster) waitFailedScheduling(pod string, timeout time.Duration) string {
	cl.t.Helper()
	var note string
	err := wait.PollUntilContextTimeout(cl.ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		var events eventsv1.EventList
		if err := cl.c.List(ctx, &events, client.InNamespace(cl.ns)); err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.Regarding.Name == pod && e.Reason == "FailedScheduling" {
				note = e.Note
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		cl.t.Fatalf("no FailedScheduling event for pod %s within %v: %v", pod, timeout, err)
	}
	return note
}

// podsPerNode counts the Pods of the test's namespace per node ("" for pending).
func (cl *cluster) podsPerNode() map[string]int {
	cl.t.Helper()
	var pods corev1.PodList
	if err := cl.c.List(cl.ctx, &pods, client.InNamespace(cl.ns)); err != nil {
		cl.t.Fatal(err)
	}
	count := map[string]int{}
	for _, p := range pods.Items {
		count[p.Spec.NodeName]++
	}
	return count
}
