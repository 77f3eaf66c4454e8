package metrics

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
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
