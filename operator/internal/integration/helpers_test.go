package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/testutil"
	"github.com/vmafx/vmafx/operator/internal/config"
	jobctl "github.com/vmafx/vmafx/operator/internal/controller/job"
	"github.com/vmafx/vmafx/operator/internal/manager"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// operatorEnv is the configuration every test starts from: fast retries and a short
// staleness window so the tests run in seconds; no listeners.
func operatorEnv(overrides ...string) map[string]string {
	env := map[string]string{
		config.EnvMetricsAddr:     "0",
		config.EnvHealthProbeAddr: "127.0.0.1:0",
		config.EnvRetryBackoff:    "200ms",
		config.EnvNodeStaleAfter:  "3s",
		config.EnvWorkerImage:     "vmafx-worker:test",
		config.EnvTrainerImage:    "vmafx-trainer:test",
		// Jobs stay until the test ends, for it to read.
		config.EnvTTLAfterFinished: "never",
	}
	for i := 0; i+1 < len(overrides); i += 2 {
		env[overrides[i]] = overrides[i+1]
	}
	return env
}

// runningOperator is an operator manager running in the test process.
type runningOperator struct {
	mgr    ctrl.Manager
	cancel context.CancelFunc
	done   chan error
	t      testing.TB
	once   sync.Once
}

// startOperator starts an operator with env and stops it when the test ends.
func startOperator(t testing.TB, env map[string]string) *runningOperator {
	t.Helper()
	return startOperatorWith(t, testenv.Config(), env)
}

// startOperatorWith is startOperator talking to the API server through restConfig.
func startOperatorWith(t testing.TB, restConfig *rest.Config, env map[string]string) *runningOperator {
	t.Helper()
	cfg, err := config.Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := manager.New(restConfig, cfg, manager.Options{SkipNameValidation: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	op := &runningOperator{mgr: mgr, cancel: cancel, done: make(chan error, 1), t: t}
	go func() { op.done <- mgr.Start(ctx) }()
	t.Cleanup(op.stop)
	return op
}

func (op *runningOperator) stop() {
	op.once.Do(func() {
		op.cancel()
		if err := <-op.done; err != nil {
			op.t.Logf("operator manager stopped with: %v", err)
		}
	})
}

// newJob returns a job with every field at its default but the two inputs; mutate sets
// what a test is about.
func newJob(ns, name string, mutate ...func(*vmafxv1.VmafxJobSpec)) *vmafxv1.VmafxJob {
	j := &vmafxv1.VmafxJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       vmafxv1.VmafxJobSpec{Reference: "https://media.example.com/ref.y4m", Distorted: "https://media.example.com/dist.y4m"},
	}
	for _, m := range mutate {
		m(&j.Spec)
	}
	return j
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := testenv.Client().Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// eventually waits, at most timeout, until cond holds.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	testutil.Eventually(t, timeout, "waiting for "+what, testutil.Condition(what, cond))
}

// consistently fails the test as soon as cond stops holding within window.
func consistently(t *testing.T, window time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	testutil.Consistently(t, window, what, testutil.Condition(what, cond))
}

func getJob(t *testing.T, ns, name string) *vmafxv1.VmafxJob {
	t.Helper()
	j := &vmafxv1.VmafxJob{}
	if err := testenv.Client().Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
		t.Fatal(err)
	}
	return j
}

// waitForJob waits until the job satisfies cond and returns it.
func waitForJob(t *testing.T, ns, name, what string, cond func(*vmafxv1.VmafxJob) bool) *vmafxv1.VmafxJob {
	t.Helper()
	return waitForJobWithin(t, 20*time.Second, ns, name, what, cond)
}

// queuedShown bounds the wait for a job to show that its Pod waits its turn (for the
// scheduler, or bound for its kubelet): the operator shows that state once it has lasted
// 30 s (queuedDelay in the job reconciler).
const queuedShown = 50 * time.Second

// waitForJobWithin is waitForJob with its own bound.
func waitForJobWithin(t *testing.T, timeout time.Duration, ns, name, what string, cond func(*vmafxv1.VmafxJob) bool) *vmafxv1.VmafxJob {
	t.Helper()
	var j *vmafxv1.VmafxJob
	eventually(t, timeout, fmt.Sprintf("job %s: %s", name, what), func() (bool, error) {
		j = &vmafxv1.VmafxJob{}
		if err := testenv.Client().Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
			return false, err
		}
		return cond(j), nil
	})
	return j
}

func waitForPod(t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	eventually(t, 20*time.Second, "pod "+name, func() (bool, error) {
		err := testenv.Client().Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, pod)
		return err == nil, client.IgnoreNotFound(err)
	})
	return pod
}

func workerPods(t *testing.T, ns, job string) []corev1.Pod {
	t.Helper()
	var pods corev1.PodList
	if err := testenv.Client().List(context.Background(), &pods, client.InNamespace(ns), client.MatchingLabels{vmafxv1.LabelJob: vmafxv1.JobLabelValue(job)}); err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

// --- kubelet and scheduler stand-ins ---

// kubeletBind plays the scheduler's bind and the kubelet's start: the Pod is bound to
// node and, when running is true, Running.
func kubeletBind(t *testing.T, pod *corev1.Pod, node string, running bool) {
	t.Helper()
	ctx := context.Background()
	c := testenv.Client()
	binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name},
		Target: corev1.ObjectReference{Kind: "Node", Name: node}}
	if err := c.SubResource("binding").Create(ctx, pod, binding); err != nil {
		t.Fatalf("binding %s: %v", pod.Name, err)
	}
	if !running {
		return
	}
	kubeletSetStatus(t, pod, func(s *corev1.PodStatus) {
		now := metav1.Now()
		s.Phase = corev1.PodRunning
		s.StartTime = &now
		s.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now}}
		s.ContainerStatuses = []corev1.ContainerStatus{{Name: "worker", Image: "vmafx-worker:test", ImageID: "x",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}
	})
}

// kubeletFinish plays the kubelet reporting the worker's exit with its termination message.
func kubeletFinish(t *testing.T, pod *corev1.Pod, exitCode int32, message string) {
	t.Helper()
	kubeletSetStatus(t, pod, func(s *corev1.PodStatus) {
		now := metav1.Now()
		s.Phase = corev1.PodSucceeded
		reason := "Completed"
		if exitCode != 0 {
			s.Phase, reason = corev1.PodFailed, "Error"
		}
		if s.StartTime == nil {
			s.StartTime = &now
		}
		s.ContainerStatuses = []corev1.ContainerStatus{{Name: "worker", Image: "vmafx-worker:test", ImageID: "x",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: exitCode, Reason: reason, Message: message, StartedAt: *s.StartTime, FinishedAt: now}}}}
	})
}

// schedulerReject plays vmafx-scheduler failing to place the Pod.
func schedulerReject(t *testing.T, pod *corev1.Pod, message string) {
	t.Helper()
	kubeletSetStatus(t, pod, func(s *corev1.PodStatus) {
		s.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: corev1.PodReasonUnschedulable, Message: message, LastTransitionTime: metav1.Now()}}
	})
}

func kubeletSetStatus(t *testing.T, pod *corev1.Pod, mutate func(*corev1.PodStatus)) {
	t.Helper()
	ctx := context.Background()
	c := testenv.Client()
	for range 5 {
		fresh := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), fresh); err != nil {
			t.Fatal(err)
		}
		mutate(&fresh.Status)
		err := c.Status().Update(ctx, fresh)
		if apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			t.Fatalf("writing status of %s: %v", pod.Name, err)
		}
		*pod = *fresh
		return
	}
	t.Fatalf("writing status of %s: conflicts", pod.Name)
}

// kubeletStopDeleted plays what the kubelet does with a running Pod that was deleted: it
// stops the worker with SIGTERM (the worker reports that scoring was cancelled and exits
// 1) and marks the Pod Failed, before it confirms the deletion (kubeletConfirmDeletion).
// Tests that skip this step cannot see how a deletion looks to the operator.
func kubeletStopDeleted(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	kubeletFinish(t, pod, 1, errorMessage(vmafxv1.ReasonInternal, "scoring cancelled (context canceled)"))
}

// kubeletConfirmDeletion plays the kubelet confirming that a deleted Pod's containers
// are gone (a delete with grace period 0), which removes the Pod from the API server once
// it has no finalizers left.
func kubeletConfirmDeletion(t *testing.T, ns, name string) {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	err := testenv.Client().Delete(context.Background(), pod, client.GracePeriodSeconds(0))
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}

// waitForPodGone waits until the Pod is removed from the API server.
func waitForPodGone(t *testing.T, ns, name string) {
	t.Helper()
	eventually(t, 20*time.Second, "pod "+name+" gone", func() (bool, error) {
		err := testenv.Client().Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &corev1.Pod{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// deviceHeartbeat plays the device plugin renewing its node's heartbeat Lease (creating
// it the first time), stamped at.
func deviceHeartbeat(t *testing.T, node *vmafxv1.VmafxNode, at time.Time) {
	t.Helper()
	ctx := context.Background()
	name, _ := vmafxv1.NodeLeaseName(node.Name)
	lease := &coordinationv1.Lease{}
	err := testenv.Client().Get(ctx, client.ObjectKey{Namespace: node.Namespace, Name: name}, lease)
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	holder, seconds := node.Name, int32(60)
	lease.Spec.HolderIdentity, lease.Spec.LeaseDurationSeconds = &holder, &seconds
	lease.Spec.RenewTime = &metav1.MicroTime{Time: at}
	if apierrors.IsNotFound(err) {
		lease.ObjectMeta = metav1.ObjectMeta{Namespace: node.Namespace, Name: name,
			Labels: map[string]string{vmafxv1.LabelComponent: vmafxv1.ComponentNodeHeartbeat}}
		err = testenv.Client().Create(ctx, lease)
	} else {
		err = testenv.Client().Update(ctx, lease)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// statusHeartbeat plays a device plugin of the release before the Leases, which stamps
// the heartbeat into the VmafxNode's status.lastHeartbeat.
func statusHeartbeat(t *testing.T, node *vmafxv1.VmafxNode, at time.Time) {
	t.Helper()
	ctx := context.Background()
	fresh := &vmafxv1.VmafxNode{}
	if err := testenv.Client().Get(ctx, client.ObjectKeyFromObject(node), fresh); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(fresh.DeepCopy())
	ts := metav1.NewTime(at)
	fresh.Status.LastHeartbeat = &ts
	if err := testenv.Client().Status().Patch(ctx, fresh, patch); err != nil {
		t.Fatal(err)
	}
}

// getLease returns node's heartbeat Lease as the API server has it.
func getLease(t *testing.T, node *vmafxv1.VmafxNode) *coordinationv1.Lease {
	t.Helper()
	name, _ := vmafxv1.NodeLeaseName(node.Name)
	lease := &coordinationv1.Lease{}
	if err := testenv.Client().Get(context.Background(), client.ObjectKey{Namespace: node.Namespace, Name: name}, lease); err != nil {
		t.Fatal(err)
	}
	return lease
}

func resultMessage(score float64, frames int) string {
	b, _ := json.Marshal(vmafxv1.WorkerResult{Version: vmafxv1.ResultVersion, Score: score, HarmonicMean: score - 0.5,
		Min: score - 3, Max: score + 2, Frames: frames, FPS: 120.5, WallSeconds: 0.2, Backend: "cpu",
		RequestedBackend: "cpu", Model: "vmaf_v0.6.1", ModelSHA256: "4d5c", KernelVersion: "test",
		Percentiles: &vmafxv1.WorkerPercentiles{P1: score - 2.5, P5: score - 2, P50: score},
		WorstFrames: []vmafxv1.WorkerFrame{{Index: frames - 1, VMAF: score - 3, Features: map[string]float64{"integer_adm2": 0.9}}}})
	return string(b)
}

func errorMessage(reason, msg string) string {
	b, _ := json.Marshal(vmafxv1.WorkerResult{Version: vmafxv1.ResultVersion, Error: &vmafxv1.WorkerError{Reason: reason, Message: msg}})
	return string(b)
}

// jobEvents returns the reasons of the events regarding a job, oldest first.
func jobEvents(t *testing.T, ns, job string) []string {
	t.Helper()
	return eventReasons(t, ns, "VmafxJob", job)
}

// eventReasons returns the reasons of the events regarding the object kind/name.
func eventReasons(t *testing.T, ns, kind, name string) []string {
	t.Helper()
	var list eventsv1.EventList
	if err := testenv.Client().List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, e := range list.Items {
		if e.Regarding.Kind == kind && e.Regarding.Name == name {
			for range max(1, eventCount(e)) {
				reasons = append(reasons, e.Reason)
			}
		}
	}
	return reasons
}

func eventCount(e eventsv1.Event) int {
	if e.Series != nil {
		return int(e.Series.Count)
	}
	return 1
}

// elected reports whether the operator leads (or runs without leader election).
func (op *runningOperator) elected() bool {
	select {
	case <-op.mgr.Elected():
		return true
	default:
		return false
	}
}

func finished(j *vmafxv1.VmafxJob) bool {
	return j.Status.Phase == vmafxv1.JobSucceeded || j.Status.Phase == vmafxv1.JobFailed
}

// podName is the name of attempt n's worker Pod of the job called name.
func podName(name string, n int32) string {
	return jobctl.PodName(&vmafxv1.VmafxJob{ObjectMeta: metav1.ObjectMeta{Name: name}}, n)
}

// bindAndRun plays vmafx-scheduler and the kubelet starting attempt n of a job.
func bindAndRun(t *testing.T, ns, job string, n int32, node string) *corev1.Pod {
	t.Helper()
	pod := waitForPod(t, ns, podName(job, n))
	kubeletBind(t, pod, node, true)
	return pod
}
