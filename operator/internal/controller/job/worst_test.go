package job

import (
	"slices"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

func TestWorkerRequestWorstFrames(t *testing.T) {
	job := &vmafxv1.VmafxJob{Spec: vmafxv1.VmafxJobSpec{Reference: "s3://b/ref.mp4", Distorted: "s3://b/dist.mp4"}}
	if r := workerRequest(job).Score; r.WorstFrames != nil || r.Pictures {
		t.Errorf("default job: %+v (the worker's default of 5 applies)", r)
	}
	job.Spec.WorstFrames = &vmafxv1.WorstFrames{Count: ptr.To[int32](0), Pictures: true}
	if r := workerRequest(job).Score; r.WorstFrames == nil || *r.WorstFrames != 0 || !r.Pictures {
		t.Errorf("request %+v, want worstFrames 0 and pictures", r)
	}
	// A chunked job's Pods never draw pictures (the API refuses the pair anyway).
	job.Spec.Parallelism = 4
	if r := workerRequest(job).Score; r.Pictures {
		t.Errorf("chunked job: %+v", r)
	}
}

func TestSetSucceededWorst(t *testing.T) {
	r := &vmafxv1.WorkerResult{
		Version: vmafxv1.ResultVersion, Score: 90, Min: 20.1234567, Max: 95, HarmonicMean: 89, Frames: 40, Backend: "cpu",
		Percentiles: &vmafxv1.WorkerPercentiles{P1: 20.5, P5: 40.25, P50: 91},
		WorstFrames: []vmafxv1.WorkerFrame{{Index: 31, VMAF: 20.1234567, Features: map[string]float64{"integer_adm2": 0.8}}, {Index: 30, VMAF: 22}},
		Scenes:      &vmafxv1.WorkerScenes{Count: 2, Worst: &vmafxv1.WorkerScene{Start: 24, Frames: 16, Mean: 30, HarmonicMean: 28, Min: 20.1234567, P5: 21}},
		Report:      "s3://b/out.json.report/",
	}
	job := &vmafxv1.VmafxJob{}
	setSucceeded(job, observation{Node: "n1", Result: r}, time.Unix(100, 0))
	res := job.Status.Result
	if p := res.Percentiles; p == nil || *p != (vmafxv1.JobPercentiles{P1: "20.500000", P5: "40.250000", P50: "91.000000"}) {
		t.Errorf("percentiles %+v", p)
	}
	want := []vmafxv1.JobFrame{{Index: 31, VMAF: "20.123457"}, {Index: 30, VMAF: "22.000000"}}
	if !slices.Equal(res.WorstFrames, want) {
		t.Errorf("worst frames %+v, want %+v", res.WorstFrames, want)
	}
	if s := res.Scenes; s == nil || s.Count != 2 || s.Worst == nil || *s.Worst != (vmafxv1.JobScene{Start: 24, Frames: 16, Mean: "30.000000", Min: "20.123457", P5: "21.000000"}) {
		t.Errorf("scenes %+v", s)
	}
	if res.Report != r.Report {
		t.Errorf("report %q", res.Report)
	}

	// A result from a worker without them leaves them out.
	plain := &vmafxv1.VmafxJob{}
	setSucceeded(plain, observation{Node: "n1", Result: &vmafxv1.WorkerResult{Version: vmafxv1.ResultVersion, Score: 90, Min: 80, Max: 95, Frames: 3}}, time.Unix(100, 0))
	if r := plain.Status.Result; r.Percentiles != nil || r.WorstFrames != nil || r.Scenes != nil || r.Report != "" {
		t.Errorf("plain result %+v", r)
	}
}
