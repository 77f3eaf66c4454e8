package scenarios

import (
	"bufio"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ulikunitz/xz"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// q01 is the first pair of the VMAF v1 reference set (vmaf/testdata/v1): 10 frames of
// 640x360 yuv420p, x264, stored xz-compressed.
var q01 = clipPair{name: "q01", width: 640, height: 360, format: "yuv420p"}

// unpackV1Pair decompresses pair's clips into a folder the node can mount (the local
// cluster's node is this machine).
func unpackV1Pair(t *testing.T, pair clipPair) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, side := range []string{"ref", "dist"} {
		in, err := os.Open(filepath.Join(testdata(), "v1", "clips", pair.name+"_"+side+".yuv.xz"))
		if err != nil {
			t.Fatal(err)
		}
		r, err := xz.NewReader(bufio.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.OpenFile(filepath.Join(dir, pair.name+"_"+side+".yuv"), os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, r); err != nil {
			t.Fatal(err)
		}
		out.Close()
		in.Close()
	}
	return dir
}

// libvmafV1 returns libvmaf's pooled means of pair under model from the v1 reference set.
func libvmafV1(t *testing.T, pair clipPair, model string) map[string]float64 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testdata(), "v1", "ref", pair.name+"_"+model+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Pooled map[string]struct {
			Mean float64 `json:"mean"`
		} `json:"pooled_metrics"`
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for k, v := range ref.Pooled {
		out[k] = v.Mean
	}
	return out
}

// TestModels is scenario 15: a VMAF v1 job and a bootstrapped-model job, every other field
// at its default, score on the local cluster as libvmaf 3.2.0 does, and the bootstrapped
// job's 95% confidence interval shows beside its score in kubectl describe.
func TestModels(t *testing.T) {
	requireBaseline(t)
	ns := createNamespace(t)
	dir := unpackV1Pair(t, q01)
	jobs := map[string]string{"v1": "vmaf_v1.0.16_3d0h", "bootstrap": "vmaf_b_v0.6.3"}
	for name, model := range jobs {
		job := newJob(ns, name, q01)
		job.Spec.Model = vmafxv1.ModelReference(model)
		job.Spec.Volume.HostPath = &corev1.HostPathVolumeSource{Path: dir, Type: ptr.To(corev1.HostPathDirectory)}
		if err := c.Create(t.Context(), job); err != nil {
			t.Fatal(err)
		}
	}
	for name, model := range jobs {
		t.Run(model, func(t *testing.T) {
			job := waitJobDone(t, client.ObjectKey{Namespace: ns, Name: name}, 4*time.Minute)
			if job.Status.Phase != vmafxv1.JobSucceeded {
				t.Fatalf("phase %s: %s", job.Status.Phase, job.Status.Message)
			}
			want := libvmafV1(t, q01, model)
			score, err := strconv.ParseFloat(job.Status.Score, 64)
			if err != nil || math.Abs(score-want["vmaf"]) > 1e-6 {
				t.Errorf("status.score %q, libvmaf's mean %.6f", job.Status.Score, want["vmaf"])
			}
			ci := job.Status.Result.ConfidenceInterval
			if model != "vmaf_b_v0.6.3" {
				if ci != nil {
					t.Errorf("a plain model's job has an interval %+v", ci)
				}
				return
			}
			if ci == nil {
				t.Fatal("no status.result.confidenceInterval")
			}
			for field, got := range map[string]string{metricCILow: ci.Low, metricCIHigh: ci.High} {
				v, err := strconv.ParseFloat(got, 64)
				if w := want[field]; err != nil || math.Abs(v-w) > 1e-6 {
					t.Errorf("%s %q, libvmaf's %.6f", field, got, w)
				}
			}
			describe := kubectl(t, "-n", ns, "describe", "vmjob", name)
			for _, line := range []string{"Confidence Interval:", "Low:", "High:", "95% confidence interval " + ci.Low + " to " + ci.High} {
				if !strings.Contains(describe, line) {
					t.Errorf("kubectl describe lacks %q:\n%s", line, describe)
				}
			}
		})
	}
}

// The libvmaf metrics the interval's ends are the pooled means of.
const (
	metricCILow  = "vmaf_ci_p95_lo"
	metricCIHigh = "vmaf_ci_p95_hi"
)
