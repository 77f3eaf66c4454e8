package integration

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/config"
	jobctl "github.com/vmafx/vmafx/operator/internal/controller/job"
	"github.com/vmafx/vmafx/operator/internal/metrics"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// TestResultSurvivesPodRemoval: a worker finishes while the operator is away and its Pod
// is force-deleted before the operator reads it. The result finalizer keeps the Pod until
// the score is recorded; the job succeeds on its one attempt, and then the Pod goes.
func TestResultSurvivesPodRemoval(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	op := startOperator(t, operatorEnv())
	create(t, newJob(ns, "kept"))
	pod := bindAndRun(t, ns, "kept", 1, "node-a")
	waitForJob(t, ns, "kept", "Running", func(j *vmafxv1.VmafxJob) bool { return j.Status.Phase == vmafxv1.JobRunning })
	op.stop()

	kubeletFinish(t, pod, 0, resultMessage(91.5, 24))
	// kubectl delete pod --force, or the Pod garbage collector: no grace period.
	if err := testenv.Client().Delete(context.Background(), pod, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}

	startOperator(t, operatorEnv())
	j := waitForJob(t, ns, "kept", "finished", func(j *vmafxv1.VmafxJob) bool { return finished(j) || j.Status.Attempts > 1 })
	if j.Status.Phase != vmafxv1.JobSucceeded || j.Status.Score != "91.500000" || j.Status.Attempts != 1 {
		t.Fatalf("phase %s, score %q, attempts %d (%s); want Succeeded with 91.500000 on attempt 1", j.Status.Phase, j.Status.Score, j.Status.Attempts, j.Status.Message)
	}
	waitForPodGone(t, ns, "kept-1")
}

// staleCache is a client whose reads of one object return an old copy of it, as an
// informer that lags the API server does; everything else goes to the API server.
type staleCache struct {
	client.Client
	stale client.Object
}

func (c staleCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if reflect.TypeOf(obj) == reflect.TypeOf(c.stale) && key == client.ObjectKeyFromObject(c.stale) {
		reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(c.stale.DeepCopyObject()).Elem())
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// TestNoExtraAttemptFromAStaleCache: a reconcile that sees an old copy of a job that has
// meanwhile succeeded (and whose Pod is gone) must not start another attempt.
func TestNoExtraAttemptFromAStaleCache(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	op := startOperator(t, operatorEnv())
	create(t, newJob(ns, "done"))
	pod := bindAndRun(t, ns, "done", 1, "node-a")
	running := waitForJob(t, ns, "done", "Running", func(j *vmafxv1.VmafxJob) bool { return j.Status.Phase == vmafxv1.JobRunning })
	kubeletFinish(t, pod, 0, resultMessage(88, 24))
	waitForJob(t, ns, "done", "Succeeded", func(j *vmafxv1.VmafxJob) bool { return j.Status.Phase == vmafxv1.JobSucceeded })
	eventually(t, 10*time.Second, "done-1 released", func() (bool, error) {
		p := waitForPod(t, ns, "done-1")
		return len(p.Finalizers) == 0, nil
	})
	op.stop()
	if err := testenv.Client().Delete(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	waitForPodGone(t, ns, "done-1")

	r := &jobctl.Reconciler{
		Client: staleCache{Client: testenv.Client(), stale: running}, APIReader: testenv.Client(),
		Recorder: events.NewFakeRecorder(100), Clock: clock.RealClock{}, Metrics: metrics.NewJobs(),
		Worker: config.WorkerConfig{Image: "vmafx-worker:test"}, Attempts: config.Attempts{RetryBackoff: 200 * time.Millisecond, MaxRetryBackoff: time.Second, PodStartTimeout: time.Minute,
			TerminatingTimeout: time.Minute}, TTLAfterFinished: -1,
	}
	for range 3 {
		if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(running)}); err != nil && !apierrors.IsConflict(err) {
			t.Logf("reconcile: %v", err)
		}
	}
	if pods := workerPods(t, ns, "done"); len(pods) != 0 {
		t.Errorf("a stale view of a succeeded job made %d new worker Pod(s): %s", len(pods), pods[0].Name)
	}
	if j := getJob(t, ns, "done"); j.Status.Phase != vmafxv1.JobSucceeded || j.Status.Attempts != 1 {
		t.Errorf("job now %s with %d attempts; want Succeeded with 1", j.Status.Phase, j.Status.Attempts)
	}
}

// TestLongJobNames: job names longer than a label value (63) up to the most a name may
// have (253) get their Pods, labelled by a short form, the full name in an annotation.
func TestLongJobNames(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv())
	for _, name := range []string{
		"scene-0042-" + strings.Repeat("x", 59), // 70 characters
		"a." + strings.Repeat("b", 250) + "c",   // 253
	} {
		create(t, newJob(ns, name))
		pod := bindAndRun(t, ns, name, 1, "node-a")
		if pod.Annotations[vmafxv1.AnnotationJobName] != name || pod.Labels[vmafxv1.LabelJob] != vmafxv1.JobLabelValue(name) {
			t.Errorf("Pod %s: annotation %q, label %q", pod.Name, pod.Annotations[vmafxv1.AnnotationJobName], pod.Labels[vmafxv1.LabelJob])
		}
		kubeletFinish(t, pod, 0, resultMessage(80, 5))
		waitForJob(t, ns, name, "Succeeded", func(j *vmafxv1.VmafxJob) bool { return j.Status.Phase == vmafxv1.JobSucceeded })
	}
}

// TestFinishedJobsExpire: a finished job and its Pods are deleted once its
// ttlSecondsAfterFinished (or the operator's default) has passed; other jobs stay.
func TestFinishedJobsExpire(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv("VMAFX_OPERATOR_TTL_AFTER_FINISHED", "1s"))
	create(t, newJob(ns, "by-default"))
	create(t, newJob(ns, "at-once", func(s *vmafxv1.VmafxJobSpec) { s.TTLSecondsAfterFinished = new(int32) }))
	create(t, newJob(ns, "kept-an-hour", func(s *vmafxv1.VmafxJobSpec) { s.TTLSecondsAfterFinished = ptr.To[int32](3600) }))
	for _, name := range []string{"by-default", "at-once", "kept-an-hour"} {
		pod := bindAndRun(t, ns, name, 1, "node-a")
		kubeletFinish(t, pod, 0, resultMessage(70, 5))
	}
	for _, name := range []string{"by-default", "at-once"} {
		eventually(t, 20*time.Second, "job "+name+" deleted", func() (bool, error) {
			err := testenv.Client().Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &vmafxv1.VmafxJob{})
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
		waitForPodGone(t, ns, name+"-1")
	}
	// Its result is recorded (the jobs finished in any order), and an hour keeps it.
	waitForJob(t, ns, "kept-an-hour", "Succeeded", func(j *vmafxv1.VmafxJob) bool { return j.Status.Phase == vmafxv1.JobSucceeded })
	var pods corev1.PodList
	if err := testenv.Client().List(context.Background(), &pods, client.InNamespace(ns)); err != nil || len(pods.Items) != 1 {
		t.Errorf("%d Pods left (%v); want kept-an-hour-1 alone", len(pods.Items), err)
	}
}
