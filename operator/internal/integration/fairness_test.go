package integration

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/config"
	jobctl "github.com/vmafx/vmafx/operator/internal/controller/job"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// TestNamespaceLimit: with VMAFX_OPERATOR_MAX_WORKERS_PER_NAMESPACE=2, a namespace's third
// and fourth jobs make no Pod and wait, saying why; another namespace is not held back;
// when a worker Pod finishes, the waiting job of higher priority takes the place, though
// it came later, and the other follows when the next one finishes.
func TestNamespaceLimit(t *testing.T) {
	team, other := testenv.CreateNamespace(t), testenv.CreateNamespace(t)
	startOperator(t, operatorEnv(config.EnvMaxWorkersPerNamespace, "2", config.EnvKueueQueueName, "vmafx"))

	create(t, newJob(team, "first"))
	create(t, newJob(team, "second"))
	first, second := waitForPod(t, team, "first-1"), waitForPod(t, team, "second-1")
	if q := first.Labels[vmafxv1.LabelKueueQueueName]; q != "vmafx" {
		t.Errorf("worker Pod's Kueue queue label = %q, want the operator's default vmafx", q)
	}
	create(t, newJob(team, "early"))
	waiting := func(name string) {
		t.Helper()
		j := waitForJob(t, team, name, "waiting for the namespace limit", func(j *vmafxv1.VmafxJob) bool {
			return j.Status.Phase == vmafxv1.JobPending && condition(j, vmafxv1.JobScheduled) == "False/"+jobctl.ReasonNamespaceLimit
		})
		if msg := conditionMessage(j, vmafxv1.JobScheduled); !strings.Contains(msg, config.EnvMaxWorkersPerNamespace) || !strings.Contains(msg, team) {
			t.Errorf("job %s: Scheduled message %q does not name the namespace and the setting", name, msg)
		}
	}
	waiting("early")
	create(t, newJob(team, "urgent", func(s *vmafxv1.VmafxJobSpec) { s.Priority = 500 }))
	waiting("urgent")
	for _, name := range []string{"early-1", "urgent-1"} {
		if podExists(t, team, name) {
			t.Fatalf("Pod %s exists although the namespace is at its limit", name)
		}
	}
	eventually(t, 10*time.Second, "event NamespaceLimitReached", func() (bool, error) {
		return slices.Contains(jobEvents(t, team, "early"), jobctl.ReasonNamespaceLimit), nil
	})

	// Another namespace has a limit of its own.
	create(t, newJob(other, "elsewhere"))
	waitForPod(t, other, "elsewhere-1")

	// A place frees: the higher priority goes first.
	kubeletBind(t, first, "node-a", true)
	kubeletFinish(t, first, 0, resultMessage(90, 10))
	waitForPod(t, team, "urgent-1")
	if podExists(t, team, "early-1") {
		t.Fatal("the priority-0 job got a Pod as well, beyond the limit")
	}
	waiting("early")

	kubeletBind(t, second, "node-a", true)
	kubeletFinish(t, second, 0, resultMessage(90, 10))
	waitForPod(t, team, "early-1")
	waitForJob(t, team, "early", "waiting for the scheduler", func(j *vmafxv1.VmafxJob) bool {
		return condition(j, vmafxv1.JobScheduled) == "False/"+jobctl.ReasonWaitingForScheduler
	})
}

func podExists(t *testing.T, ns, name string) bool {
	t.Helper()
	err := testenv.Client().Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &corev1.Pod{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// TestLadderEncodesCountAgainstTheNamespaceLimit: a ladder's encode Pods take places under
// the namespace's worker limit like the jobs' worker Pods: at the limit an encode waits,
// saying why in its rung, and a live encode Pod holds back a job.
func TestLadderEncodesCountAgainstTheNamespaceLimit(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv(config.EnvMaxWorkersPerNamespace, "1"))
	create(t, newJob(ns, "first"))
	first := waitForPod(t, ns, "first-1")
	create(t, &vmafxv1.VmafxLadder{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lad"},
		Spec: vmafxv1.VmafxLadderSpec{
			Reference:   "s3://media/title.mp4",
			Resolutions: []vmafxv1.LadderResolution{{Height: 360}},
			Codecs:      []vmafxv1.LadderCodec{{Encoder: vmafxv1.EncoderX264, Values: []int32{30}}},
			Output:      "s3://results/lad",
		},
	})
	l := waitForLadder(t, ns, "lad", "an encode waiting for the limit", func(l *vmafxv1.VmafxLadder) bool {
		return len(l.Status.Rungs) == 1 && strings.Contains(l.Status.Rungs[0].Message, config.EnvMaxWorkersPerNamespace)
	})
	if r := l.Status.Rungs[0]; r.EncodeAttempts != 0 || !strings.Contains(r.Message, ns) || podExists(t, ns, "lad-enc-360p-x264-crf30-1") {
		t.Errorf("rung %+v; want no encode Pod while the namespace is at its limit", r)
	}
	kubeletBind(t, first, "node-a", true)
	kubeletFinish(t, first, 0, resultMessage(90, 10))
	enc := waitForPod(t, ns, "lad-enc-360p-x264-crf30-1")
	if enc.Spec.SchedulerName != vmafxv1.SchedulerName {
		t.Errorf("encode Pod on scheduler %q, want %s", enc.Spec.SchedulerName, vmafxv1.SchedulerName)
	}
	// The live encode Pod holds the namespace's one place.
	create(t, newJob(ns, "second"))
	waitForJob(t, ns, "second", "waiting for the namespace limit", func(j *vmafxv1.VmafxJob) bool {
		return j.Status.Phase == vmafxv1.JobPending && condition(j, vmafxv1.JobScheduled) == "False/"+jobctl.ReasonNamespaceLimit
	})
	if podExists(t, ns, "second-1") {
		t.Fatal("a job's Pod was created while an encode Pod held the namespace's one place")
	}
	kubeletBind(t, enc, "cpu-node", true)
	kubeletFinish(t, enc, 0, encodeMessage("s3://results/lad/360p-x264-crf30.mkv", 640, 360, 25, 10000))
	// The job waits behind nothing now (the ladder's scoring job is created after it).
	waitForPod(t, ns, "second-1")
}
