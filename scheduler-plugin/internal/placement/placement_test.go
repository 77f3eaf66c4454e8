package placement

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	testingclock "k8s.io/utils/clock/testing"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

func TestNewRefusesBadArgs(t *testing.T) {
	tests := map[string]struct {
		args      runtime.Object
		wantInErr []string
	}{
		"wrong type": {args: &v1.Pod{}, wantInErr: []string{"want args to be of type VmafxPlacementArgs"}},
		"invalid values": {
			args: func() runtime.Object {
				a := defaultArgs()
				a.HeartbeatStaleAfter = metav1.Duration{}
				a.ScoringStrategy = "Random"
				return a
			}(),
			wantInErr: []string{
				"pluginConfig[VmafxPlacement].args.heartbeatStaleAfter",
				"pluginConfig[VmafxPlacement].args.scoringStrategy",
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			// The args are checked before the handle is touched, so none is needed here.
			_, err := New(ctx(t), tc.args, nil)
			if err == nil {
				t.Fatal("New accepted bad args")
			}
			for _, want := range tc.wantInErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
		})
	}
}

// recordingActivator records the Pods it is asked to activate.
type recordingActivator struct{ pods []string }

func (r *recordingActivator) Activate(_ klog.Logger, pods map[string]*v1.Pod) {
	for key := range pods {
		r.pods = append(r.pods, key)
	}
}

func TestActivate(t *testing.T) {
	bound := workerPod("cuda")
	bound.Name, bound.Spec.NodeName = "bound", "n2"
	hip := workerPod("hip")
	hip.Name = "hip"
	auto := workerPod("auto")
	auto.Name = "auto"
	otherScheduler := workerPod("cuda")
	otherScheduler.Name, otherScheduler.Spec.SchedulerName = "other-scheduler", v1.DefaultSchedulerName
	deleting := workerPod("cuda")
	deleting.Name, deleting.DeletionTimestamp = "deleting", &metav1.Time{Time: t0}
	pods := []*v1.Pod{
		workerPod("cuda"), bound, hip, auto, otherScheduler, deleting,
		st.MakePod().Namespace("jobs").Name("not-a-worker").SchedulerName(vmafxv1.SchedulerName).Obj(),
	}
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, p := range pods {
		if err := indexer.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	clk := testingclock.NewFakeClock(t0)
	tt := newTestTable(t, clk, time.Minute)
	p := testPlugin(defaultArgs(), tt, clk)
	activator := &recordingActivator{}
	p.profile, p.pods, p.activator = vmafxv1.SchedulerName, corelisters.NewPodLister(indexer), activator
	tt.offered = p.activate

	tt.put(vmafxNode("n1", vmafxv1.VendorNVIDIA, t0))
	want := []string{"jobs/auto", "jobs/job-1"}
	got := activator.pods
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("activated pods (-want +got):\n%s", diff)
	}

	// A routine heartbeat wakes nobody.
	activator.pods = nil
	clk.Step(10 * time.Second)
	tt.put(vmafxNode("n1", vmafxv1.VendorNVIDIA, clk.Now()))
	if len(activator.pods) != 0 {
		t.Errorf("routine heartbeat activated %v", activator.pods)
	}
}
