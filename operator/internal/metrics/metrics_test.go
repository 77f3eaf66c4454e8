package metrics

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/metriclabels"
)

// listRecorder is a client.Reader that lists fixed jobs and records the options of each
// List: the real cache is shared with the reconcilers, and what the test needs to know is
// whether the collector asked it for copies.
type listRecorder struct {
	jobs []vmafxv1.VmafxJob
	opts []*client.ListOptions
}

func (l *listRecorder) Get(context.Context, types.NamespacedName, client.Object, ...client.GetOption) error {
	return nil
}

func (l *listRecorder) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := &client.ListOptions{}
	o.ApplyOptions(opts)
	l.opts = append(l.opts, o)
	list.(*vmafxv1.VmafxJobList).Items = l.jobs
	return nil
}

func TestPhaseCollectorCountsWithoutDeepCopies(t *testing.T) {
	r := &listRecorder{jobs: []vmafxv1.VmafxJob{
		{Status: vmafxv1.VmafxJobStatus{Phase: vmafxv1.JobSucceeded}},
		{Status: vmafxv1.VmafxJobStatus{Phase: vmafxv1.JobSucceeded}},
		{Status: vmafxv1.VmafxJobStatus{Phase: vmafxv1.JobRunning}},
		{},
	}}
	want := `
# HELP vmafx_jobs VmafxJobs by phase.
# TYPE vmafx_jobs gauge
vmafx_jobs{phase="Failed"} 0
vmafx_jobs{phase="Pending"} 1
vmafx_jobs{phase="Running"} 1
vmafx_jobs{phase="Succeeded"} 2
`
	if err := testutil.CollectAndCompare(NewPhaseCollector(r), strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	if len(r.opts) != 1 || r.opts[0].UnsafeDisableDeepCopy == nil || !*r.opts[0].UnsafeDisableDeepCopy {
		t.Errorf("the collector listed with %+v; want UnsafeDisableDeepCopy, so a scrape does not copy the job cache", r.opts)
	}
}

// A succeeded job's frames and speed are counted by its backend and its device's model,
// the model read from the result's device before the compute API; an unknown backend is
// "other", a CPU result's gpu "none", and models beyond the bound "other".
func TestObserveResult(t *testing.T) {
	m := NewJobs()
	m.gpus = metriclabels.NewGPUSet(1)
	m.ObserveResult(&vmafxv1.JobResult{Frames: 60, FPS: "42.5", Backend: "cpu"})
	m.ObserveResult(&vmafxv1.JobResult{Frames: 100, FPS: "1500", Backend: "vulkan", Device: "NVIDIA H100 80GB HBM3, Vulkan 1.3.280, NVIDIA 570.86"})
	m.ObserveResult(&vmafxv1.JobResult{Frames: 10, FPS: "not a number", Backend: "vulkan", Device: "AMD Radeon RX 7900 XTX (RADV NAVI31), Vulkan 1.3"})
	m.ObserveResult(&vmafxv1.JobResult{Frames: 5, Backend: "metal"})
	m.ObserveResult(nil)
	want := `
# HELP vmafx_job_scored_frames_total Frames scored by succeeded VmafxJobs, by the backend that ran and the GPU model (none on the CPU).
# TYPE vmafx_job_scored_frames_total counter
vmafx_job_scored_frames_total{backend="cpu",gpu="none"} 60
vmafx_job_scored_frames_total{backend="other",gpu="none"} 5
vmafx_job_scored_frames_total{backend="vulkan",gpu="nvidia-h100-80gb-hbm3"} 100
vmafx_job_scored_frames_total{backend="vulkan",gpu="other"} 10
`
	if err := testutil.CollectAndCompare(m.ScoredFrames, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(m.ScoringFPS); n != 2 {
		t.Errorf("%d fps series, want 2 (the results with a speed)", n)
	}
}
