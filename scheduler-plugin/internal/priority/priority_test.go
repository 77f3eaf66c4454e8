package priority

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/ptr"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

var t0 = time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC)

// entry is a queued Pod with a Kubernetes priority (nil: none), a job priority annotation
// ("": none) and the time it entered the queue, in seconds after t0.
func entry(t testing.TB, k8sPriority *int32, jobPriority string, at int) fwk.QueuedEntityInfo {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{}}}
	pod.Spec.Priority = k8sPriority
	if jobPriority != "" {
		pod.Annotations[vmafxv1.AnnotationPriority] = jobPriority
	}
	pi, err := framework.NewPodInfo(pod)
	if err != nil {
		t.Fatal(err)
	}
	return &framework.QueuedPodInfo{PodInfo: pi, QueueingParams: framework.QueueingParams{Timestamp: t0.Add(time.Duration(at) * time.Second)}}
}

func TestLess(t *testing.T) {
	type pod struct {
		k8s *int32
		job string
		at  int
	}
	for name, tc := range map[string]struct {
		a, b pod
		want bool
	}{
		"higher job priority first, though later":   {a: pod{job: "500", at: 2}, b: pod{job: "100", at: 1}, want: true},
		"lower job priority after, though earlier":  {a: pod{job: "100", at: 1}, b: pod{job: "500", at: 2}, want: false},
		"same job priority: first come first":       {a: pod{job: "100", at: 1}, b: pod{job: "100", at: 2}, want: true},
		"same job priority: later comes after":      {a: pod{job: "100", at: 2}, b: pod{job: "100", at: 1}, want: false},
		"same priority and time: not less (strict)": {a: pod{job: "7", at: 1}, b: pod{job: "7", at: 1}, want: false},
		"no annotation is priority 0":               {a: pod{at: 1}, b: pod{job: "0", at: 2}, want: true},
		"any job priority beats none":               {a: pod{job: "1", at: 9}, b: pod{at: 1}, want: true},
		"Kubernetes priority outranks job priority": {a: pod{k8s: ptr.To[int32](10), job: "0", at: 2}, b: pod{job: "1000", at: 1}, want: true},
		"lower Kubernetes priority after":           {a: pod{k8s: ptr.To[int32](-5), job: "1000", at: 1}, b: pod{job: "0", at: 2}, want: false},
		"equal Kubernetes priority: job priority":   {a: pod{k8s: ptr.To[int32](10), job: "2", at: 2}, b: pod{k8s: ptr.To[int32](10), job: "1", at: 1}, want: true},
		"unparsable annotation counts as 0":         {a: pod{job: "high", at: 2}, b: pod{job: "1", at: 1}, want: false},
		"annotation above 1000 is clamped to 1000":  {a: pod{job: "1000", at: 1}, b: pod{job: "99999", at: 2}, want: true},
		"negative annotation is clamped to 0":       {a: pod{job: "-3", at: 1}, b: pod{at: 2}, want: true},
	} {
		t.Run(name, func(t *testing.T) {
			a, b := entry(t, tc.a.k8s, tc.a.job, tc.a.at), entry(t, tc.b.k8s, tc.b.job, tc.b.at)
			if got := (&Priority{}).Less(a, b); got != tc.want {
				t.Errorf("Less = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestJobPriority(t *testing.T) {
	for in, want := range map[string]int{"": 0, "0": 0, "250": 250, "1000": 1000, "1001": 1000, "-1": 0, "2.5": 0, " 3": 0} {
		if got := JobPriority(entry(t, nil, in, 0)); got != want {
			t.Errorf("JobPriority(%q) = %d, want %d", in, got, want)
		}
	}
}

// groupEntry is a queue entry that is not a single Pod.
type groupEntry struct{ fwk.QueuedEntityInfo }

func TestPodGroupsSortByKubernetesPriorityAndTime(t *testing.T) {
	a := groupEntry{entry(t, nil, "900", 2)}
	b := entry(t, nil, "", 1)
	if JobPriority(a) != 0 {
		t.Errorf("a pod group has job priority %d, want 0", JobPriority(a))
	}
	if (&Priority{}).Less(a, b) {
		t.Error("a later pod group went before an earlier Pod of the same priority")
	}
}

func BenchmarkLess(b *testing.B) {
	x, y := entry(b, nil, "500", 1), entry(b, nil, "500", 2)
	p := &Priority{}
	b.ReportAllocs()
	for b.Loop() {
		p.Less(x, y)
	}
}
