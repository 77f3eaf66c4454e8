package attempt

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

var limitNow = time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC)

func limitJob(name string, priority int32, createdAt int, waiting bool) *vmafxv1.VmafxJob {
	j := &vmafxv1.VmafxJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name,
		CreationTimestamp: metav1.NewTime(limitNow.Add(time.Duration(createdAt) * time.Second))}}
	j.Spec.Priority = priority
	j.Status.Phase = vmafxv1.JobPending
	if waiting {
		meta.SetStatusCondition(&j.Status.Conditions, metav1.Condition{Type: vmafxv1.JobScheduled, Status: metav1.ConditionFalse, Reason: ReasonNamespaceLimit, Message: "waiting"})
	}
	return j
}

func workerPod(name string, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, Labels: map[string]string{vmafxv1.LabelJob: name}},
		Status: corev1.PodStatus{Phase: phase}}
}

func limitClient(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := vmafxv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	// The limit's indexes, as the manager registers them (RegisterIndexes).
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).
		WithIndex(&corev1.Pod{}, indexLivePod, livePodKey).
		WithIndex(&vmafxv1.VmafxJob{}, indexWaitsForLimit, waitingJobKey).Build()
}

func TestNamespaceLimitAdmit(t *testing.T) {
	ctx := context.Background()
	running, done, failed := workerPod("a-1", corev1.PodRunning), workerPod("b-1", corev1.PodSucceeded), workerPod("c-1", corev1.PodFailed)
	for name, tc := range map[string]struct {
		objs []client.Object
		job  *vmafxv1.VmafxJob
		want bool
	}{
		"under the limit":                   {objs: []client.Object{running, done, failed}, job: limitJob("new", 0, 9, false), want: true},
		"at the limit":                      {objs: []client.Object{running, workerPod("d-1", corev1.PodPending)}, job: limitJob("new", 0, 9, false), want: false},
		"finished Pods do not count":        {objs: []client.Object{done, failed, workerPod("x", corev1.PodSucceeded)}, job: limitJob("new", 0, 9, false), want: true},
		"a waiting job of higher priority":  {objs: []client.Object{running, limitJob("vip", 5, 10, true)}, job: limitJob("new", 0, 9, false), want: false},
		"a waiting job of lower priority":   {objs: []client.Object{running, limitJob("bulk", 0, 1, true)}, job: limitJob("new", 5, 9, true), want: true},
		"same priority, the older first":    {objs: []client.Object{running, limitJob("older", 3, 1, true)}, job: limitJob("new", 3, 9, true), want: false},
		"same priority, the younger after":  {objs: []client.Object{running, limitJob("younger", 3, 20, true)}, job: limitJob("new", 3, 9, true), want: true},
		"a job that is not waiting":         {objs: []client.Object{running, limitJob("vip", 5, 1, false)}, job: limitJob("new", 0, 9, false), want: true},
		"the job itself does not count":     {objs: []client.Object{running, limitJob("new", 0, 9, true)}, job: limitJob("new", 0, 9, true), want: true},
		"places enough for those ahead too": {objs: []client.Object{limitJob("vip", 5, 1, true)}, job: limitJob("new", 0, 9, false), want: true},
	} {
		t.Run(name, func(t *testing.T) {
			l := NewNamespaceLimit(2, nil)
			got, err := l.Admit(ctx, limitClient(t, tc.objs...), tc.job, "new-1", limitNow)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("admit = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestNamespaceLimitCountsPodsNotYetCached: a Pod admitted a moment ago counts before the
// cache shows it, so parallel reconciles cannot both take the last place; a refused Pod
// gives its place back, and one the cache never showed stops counting after a minute.
func TestNamespaceLimitCountsPodsNotYetCached(t *testing.T) {
	ctx := context.Background()
	l := NewNamespaceLimit(1, nil)
	c := limitClient(t)
	if ok, _ := l.Admit(ctx, c, limitJob("a", 0, 1, false), "a-1", limitNow); !ok {
		t.Fatal("the first job was not admitted into an empty namespace")
	}
	if ok, _ := l.Admit(ctx, c, limitJob("b", 0, 2, false), "b-1", limitNow); ok {
		t.Fatal("a second job was admitted while the first one's Pod was not in the cache yet")
	}
	l.Forget("team", "a-1")
	if ok, _ := l.Admit(ctx, c, limitJob("b", 0, 2, false), "b-1", limitNow); !ok {
		t.Fatal("a refused Pod kept its place")
	}
	if ok, _ := l.Admit(ctx, c, limitJob("c", 0, 3, false), "c-1", limitNow.Add(createdGrace+time.Second)); !ok {
		t.Fatal("a Pod the cache never showed still counted after the grace period")
	}
}

// TestNamespaceLimitWaking: a place come free wakes the first waiting jobs by the
// scheduler's order, one per free place (one at least), and not a job admitted a moment
// ago whose status still says it waits; jobs that do not wait are never woken.
func TestNamespaceLimitWaking(t *testing.T) {
	ctx := context.Background()
	waiting := []client.Object{
		limitJob("bulk", 0, 1, true), limitJob("younger", 3, 20, true), limitJob("vip", 5, 10, true),
		limitJob("older", 3, 1, true), limitJob("idle", 9, 0, false),
	}
	for name, tc := range map[string]struct {
		pods []client.Object
		want []string
	}{
		"one place free":            {pods: []client.Object{workerPod("a-1", corev1.PodRunning), workerPod("b-1", corev1.PodSucceeded)}, want: []string{"vip"}},
		"two places free":           {pods: []client.Object{workerPod("b-1", corev1.PodFailed)}, want: []string{"vip", "older"}},
		"none free: the first only": {pods: []client.Object{workerPod("a-1", corev1.PodRunning), workerPod("c-1", corev1.PodPending)}, want: []string{"vip"}},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := NewNamespaceLimit(2, nil).Waking(ctx, limitClient(t, append(tc.pods, waiting...)...), "team", limitNow)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("woke %v, want %v", got, tc.want)
			}
		})
	}

	l := NewNamespaceLimit(2, nil)
	c := limitClient(t, waiting...)
	if ok, err := l.Admit(ctx, c, waiting[2].(*vmafxv1.VmafxJob), "vip-1", limitNow); err != nil || !ok {
		t.Fatalf("the first waiting job was not admitted into an empty namespace: %v, %v", ok, err)
	}
	// vip's Pod is not in the cache and its status still says it waits: one place is left.
	if got, err := l.Waking(ctx, c, "team", limitNow); err != nil || !slices.Equal(got, []string{"older"}) {
		t.Errorf("after vip's admission woke %v (%v), want [older]", got, err)
	}
	var none *NamespaceLimit
	if got, err := none.Waking(ctx, c, "team", limitNow); err != nil || got != nil {
		t.Errorf("no limit woke %v (%v)", got, err)
	}
}

// TestNamespaceLimitIndexKeys: only live Pods of a job or a ladder, and only jobs whose
// status says they wait for the limit, are indexed; each Pod under its owner's kind, so
// that neither cache's Pods count twice.
func TestNamespaceLimitIndexKeys(t *testing.T) {
	ladderPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "l", Labels: map[string]string{vmafxv1.LabelLadder: "l"}}}
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "o", Labels: map[string]string{"app": "x"}}}
	deleting := limitJob("gone", 0, 1, true)
	deleting.DeletionTimestamp = &metav1.Time{Time: limitNow}
	for _, tc := range []struct {
		obj  client.Object
		key  func(client.Object) []string
		want []string
	}{
		{workerPod("a", corev1.PodPending), livePodKey, []string{"job"}},
		{workerPod("a", corev1.PodRunning), livePodKey, []string{"job"}},
		{workerPod("a", corev1.PodSucceeded), livePodKey, nil},
		{workerPod("a", corev1.PodFailed), livePodKey, nil},
		{ladderPod, livePodKey, []string{"ladder"}},
		{other, livePodKey, nil},
		{limitJob("w", 0, 1, true), waitingJobKey, []string{"yes"}},
		{limitJob("r", 0, 1, false), waitingJobKey, nil},
		{deleting, waitingJobKey, nil},
	} {
		if got := tc.key(tc.obj); !slices.Equal(got, tc.want) {
			t.Errorf("%T %s: indexed under %v, want %v", tc.obj, tc.obj.GetName(), got, tc.want)
		}
	}
}

func TestNoLimit(t *testing.T) {
	if NewNamespaceLimit(0, nil) != nil {
		t.Error("a limit of 0 made a limiter; it means no limit")
	}
	var l *NamespaceLimit
	l.Forget("team", "x") // no limit: nothing to forget, and no panic
}
