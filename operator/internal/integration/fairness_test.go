package integration

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
