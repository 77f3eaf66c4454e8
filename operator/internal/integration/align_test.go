package integration

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// alignedResult is a worker result with an alignment.
func alignedResult(a *vmafxv1.WorkerAlignment) string {
	b, _ := json.Marshal(vmafxv1.WorkerResult{Version: vmafxv1.ResultVersion, Score: 36.35, HarmonicMean: 8.4, Max: 48.6,
		Frames: 24, FPS: 120.5, Backend: "cpu", Model: "vmaf_v0.6.1", Alignment: a})
	return string(b)
}

// TestJobAlignment: spec.alignment.auto reaches the worker as --auto-align; a result whose
// pairing is likely misaligned keeps its score, with Aligned False and a Warning event
// naming the offset; an auto-aligned one shows its offset and Aligned True.
func TestJobAlignment(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv())
	raw := func(s *vmafxv1.VmafxJobSpec) {
		s.Reference, s.Distorted, s.Width, s.Height = "s3://clips/ref.yuv", "s3://clips/dist.yuv", ptr.To[int32](176), ptr.To[int32](144)
	}
	create(t, newJob(ns, "as-is", raw))
	create(t, newJob(ns, "auto", raw, func(s *vmafxv1.VmafxJobSpec) { s.Alignment = &vmafxv1.Alignment{Auto: true, Window: 12} }))

	auto := waitForPod(t, ns, "auto-1")
	if r := podRequest(t, auto).Score; r.Alignment == nil || *r.Alignment != (vmafxv1.RequestAlignment{Auto: true, Window: 12}) || r.Frames != nil {
		t.Errorf("auto-aligned job's worker request %+v", r)
	}
	kubeletBind(t, auto, "node-a", true)
	kubeletFinish(t, auto, 0, alignedResult(&vmafxv1.WorkerAlignment{Auto: true, Offset: 2, DistortedStart: 2, Confidence: 0.97,
		Confirmed: true, Measure: "luma-psnr-thumbnail", BestPSNR: 49.56, BasePSNR: 14.48, Window: 12, Pairs: 12}))
	j := waitForJob(t, ns, "auto", "Succeeded", func(j *vmafxv1.VmafxJob) bool { return j.Status.Phase == vmafxv1.JobSucceeded })
	if a := j.Status.Result.Alignment; a == nil || !a.Auto || a.Offset != 2 || a.DistortedStart != 2 || a.Confidence != "0.97" ||
		condition(j, vmafxv1.JobAligned) != "True/AutoAligned" {
		t.Errorf("auto-aligned: alignment %+v, Aligned %s", a, condition(j, vmafxv1.JobAligned))
	}

	plain := bindAndRun(t, ns, "as-is", 1, "node-a")
	kubeletFinish(t, plain, 0, alignedResult(&vmafxv1.WorkerAlignment{Misaligned: true, Offset: 2, Confidence: 0.97,
		Confirmed: true, Measure: "luma-psnr-thumbnail", BestPSNR: 49.56, BasePSNR: 14.48, Window: 12, Pairs: 12}))
	j = waitForJob(t, ns, "as-is", "Succeeded", func(j *vmafxv1.VmafxJob) bool { return j.Status.Phase == vmafxv1.JobSucceeded })
	if j.Status.Score != "36.350000" || condition(j, vmafxv1.JobAligned) != "False/LikelyMisaligned" ||
		j.Status.Result.Alignment == nil || !j.Status.Result.Alignment.Misaligned {
		t.Errorf("misaligned: score %s, Aligned %s, alignment %+v", j.Status.Score, condition(j, vmafxv1.JobAligned), j.Status.Result.Alignment)
	}
	eventually(t, 10*time.Second, "a LikelyMisaligned event beside Succeeded", func() (bool, error) {
		ev := jobEvents(t, ns, "as-is")
		return slices.Contains(ev, "Succeeded") && slices.Contains(ev, "LikelyMisaligned"), nil
	})
	if ev := jobEvents(t, ns, "auto"); slices.Contains(ev, "LikelyMisaligned") {
		t.Errorf("auto-aligned job's events %v", ev)
	}
}

// TestChunkedJobAutoAlignment: a chunked job with alignment.auto searches in its probe
// (--probe --auto-align), gives every chunk and the merge the starts the probe found, and
// shows the offset in its result once merged.
func TestChunkedJobAutoAlignment(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	startOperator(t, operatorEnv())
	create(t, chunkedJob(ns, "aligned-split", 2, func(s *vmafxv1.VmafxJobSpec) { s.Alignment = &vmafxv1.Alignment{Auto: true} }))

	probe := waitForPod(t, ns, "aligned-split-probe-1")
	if r := podRequest(t, probe).Score; r.Alignment == nil || !r.Alignment.Auto || !r.Probe {
		t.Errorf("probe request %+v, want auto alignment and the probe", r)
	}
	b, _ := json.Marshal(vmafxv1.WorkerResult{Version: vmafxv1.ResultVersion, Frames: 10, Backend: "cpu", Model: "vmaf_v0.6.1",
		Alignment: &vmafxv1.WorkerAlignment{Auto: true, Offset: -3, ReferenceStart: 3, Confidence: 0.91, Confirmed: true,
			Measure: "luma-psnr-thumbnail", BestPSNR: 40, BasePSNR: 20, Window: 30, Pairs: 60}})
	runStep(t, ns, "aligned-split-probe-1", "node-a", 0, string(b))

	for _, name := range []string{"aligned-split-c0-1", "aligned-split-c1-1"} {
		pod := waitForPod(t, ns, name)
		if r := podRequest(t, pod).Score; r.Alignment == nil || *r.Alignment != (vmafxv1.RequestAlignment{ReferenceStart: 3}) {
			t.Errorf("%s request %+v, want the probe's starts and no auto alignment", name, r)
		}
		kubeletBind(t, pod, "node-a", true)
		kubeletFinish(t, pod, 0, resultMessage(90, 5))
	}
	merge := waitForPod(t, ns, "aligned-split-merge-1")
	if r := podRequest(t, merge).Score; r.Alignment == nil || *r.Alignment != (vmafxv1.RequestAlignment{ReferenceStart: 3}) {
		t.Errorf("merge request %+v, want the probe's starts", r)
	}
	kubeletBind(t, merge, "node-a", true)
	kubeletFinish(t, merge, 0, resultMessage(91.25, 10))
	j := waitForJob(t, ns, "aligned-split", "Succeeded", func(j *vmafxv1.VmafxJob) bool { return j.Status.Phase == vmafxv1.JobSucceeded })
	if a := j.Status.Result.Alignment; a == nil || !a.Auto || a.Offset != -3 || a.ReferenceStart != 3 || a.Confidence != "0.91" ||
		condition(j, vmafxv1.JobAligned) != "True/AutoAligned" || j.Status.Chunks.Alignment == nil {
		t.Errorf("alignment %+v, Aligned %s, chunks' alignment %+v", a, condition(j, vmafxv1.JobAligned), j.Status.Chunks.Alignment)
	}
}
