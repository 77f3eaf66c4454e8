package scenarios

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// clipPair is one of the worker's test clip pairs (vmaf/testdata/pairs.tsv), with
// libvmaf's own score of it in vmaf/testdata/ref.
type clipPair struct {
	name          string
	width, height int32
	format        vmafxv1.PixelFormat
}

// p01 is 24 frames of 176x144 yuv420p, libx264 CRF 18: scored in about a tenth of a
// second on one core.
var p01 = clipPair{name: "p01", width: 176, height: 144, format: "yuv420p"}

// testdata is the worker's test data folder in this work tree. The local cluster's node
// is this machine, so a hostPath volume of it gives the worker the clips.
func testdata() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "vmaf", "testdata")
}

// newJob returns a VmafxJob that scores pair, its clips mounted from the work tree, with
// every other field at its default (model vmaf_v0.6.1, backend auto: the CPU here).
func newJob(ns, name string, pair clipPair) *vmafxv1.VmafxJob {
	return &vmafxv1.VmafxJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: vmafxv1.VmafxJobSpec{
			Reference:   vmafxv1.VideoURI("file:///data/" + pair.name + "_ref.yuv"),
			Distorted:   vmafxv1.VideoURI("file:///data/" + pair.name + "_dist.yuv"),
			Width:       ptr.To(pair.width),
			Height:      ptr.To(pair.height),
			PixelFormat: pair.format,
			Volume: &vmafxv1.JobVolume{HostPath: &corev1.HostPathVolumeSource{
				Path: filepath.Join(testdata(), "clips"),
				Type: ptr.To(corev1.HostPathDirectory),
			}},
		},
	}
}

// libvmafMean is libvmaf's pooled mean VMAF of pair with vmaf_v0.6.1.
func libvmafMean(t *testing.T, pair clipPair) float64 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testdata(), "ref", pair.name+"_v061.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Pooled struct {
			VMAF struct {
				Mean float64 `json:"mean"`
			} `json:"vmaf"`
		} `json:"pooled_metrics"`
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	return ref.Pooled.VMAF.Mean
}

// waitJobDone waits until the job Succeeded or Failed and returns it.
func waitJobDone(t *testing.T, key types.NamespacedName, timeout time.Duration) *vmafxv1.VmafxJob {
	t.Helper()
	job := &vmafxv1.VmafxJob{}
	eventually(t, timeout, "VmafxJob "+key.String()+" done", func(ctx context.Context) error {
		if err := c.Get(ctx, key, job); err != nil {
			return err
		}
		if job.Status.Phase == vmafxv1.JobSucceeded || job.Status.Phase == vmafxv1.JobFailed {
			return nil
		}
		return fmt.Errorf("phase %q: %s", job.Status.Phase, job.Status.Message)
	})
	return job
}

// TestJob is scenario 2: a VmafxJob creates a worker Pod that vmafx-scheduler binds, the
// kubelet gives it a slot from the device plugin, the Pod succeeds, and the job records
// phase Succeeded, the node, timings and a score equal to libvmaf's for the clip pair.
func TestJob(t *testing.T) {
	requireBaseline(t)
	ns := createNamespace(t)
	job := newJob(ns, "p01", p01)
	applied := time.Now()
	if err := c.Create(t.Context(), job); err != nil {
		t.Fatal(err)
	}
	job = waitJobDone(t, client.ObjectKeyFromObject(job), 3*time.Minute)
	t.Logf("apply to %s in %s", job.Status.Phase, time.Since(applied).Round(10*time.Millisecond))

	t.Run("job succeeded with libvmaf's score", func(t *testing.T) {
		if job.Status.Phase != vmafxv1.JobSucceeded {
			t.Fatalf("phase %s: %s", job.Status.Phase, job.Status.Message)
		}
		score, err := strconv.ParseFloat(job.Status.Score, 64)
		if err != nil {
			t.Fatalf("status.score %q: %v", job.Status.Score, err)
		}
		// The reference file and status.score both carry six decimals.
		if want := libvmafMean(t, p01); math.Abs(score-want) > 1e-6 {
			t.Errorf("status.score = %v, libvmaf's mean = %v", score, want)
		}
		if job.Status.Node != nodeName {
			t.Errorf("status.node = %q, want %q", job.Status.Node, nodeName)
		}
		if job.Status.StartTime == nil || job.Status.CompletionTime == nil || job.Status.CompletionTime.Before(job.Status.StartTime) {
			t.Errorf("timings: startTime %v, completionTime %v", job.Status.StartTime, job.Status.CompletionTime)
		}
		if job.Status.Result == nil || job.Status.Result.Frames != 24 {
			t.Errorf("status.result = %+v, want 24 frames", job.Status.Result)
		}
	})

	var pod corev1.Pod
	if err := c.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: job.Status.PodName}, &pod); err != nil {
		t.Fatalf("worker Pod %q: %v", job.Status.PodName, err)
	}

	t.Run("vmafx-scheduler placed the worker", func(t *testing.T) {
		if pod.Spec.SchedulerName != vmafxv1.SchedulerName {
			t.Errorf("spec.schedulerName = %q, want %q", pod.Spec.SchedulerName, vmafxv1.SchedulerName)
		}
		if pod.Labels[vmafxv1.LabelJob] != job.Name {
			t.Errorf("label %s = %q, want %q", vmafxv1.LabelJob, pod.Labels[vmafxv1.LabelJob], job.Name)
		}
		eventually(t, 30*time.Second, "Scheduled event from vmafx-scheduler", func(ctx context.Context) error {
			var events eventsv1.EventList
			if err := c.List(ctx, &events, client.InNamespace(ns)); err != nil {
				return err
			}
			for _, e := range events.Items {
				if e.Regarding.UID == pod.UID && e.Reason == "Scheduled" {
					if e.ReportingController != vmafxv1.SchedulerName {
						return fmt.Errorf("Scheduled by %q", e.ReportingController)
					}
					return nil
				}
			}
			return errors.New("no Scheduled event for the worker Pod")
		})
	})

	t.Run("kubelet allocated a slot", func(t *testing.T) {
		limit := pod.Spec.Containers[0].Resources.Limits[vmafxv1.ResourceSlot]
		if limit.Value() != 1 {
			t.Errorf("worker limit %s = %s, want 1", vmafxv1.ResourceSlot, limit.String())
		}
		if pod.Status.Phase != corev1.PodSucceeded {
			t.Errorf("worker Pod phase %s, want Succeeded", pod.Status.Phase)
		}
		// The device plugin's Allocate answer is the only source of the container's
		// VMAFX_DEVICE (and VMAFX_BACKEND): the Pod spec has neither. The worker logs the
		// device it was given.
		for _, e := range pod.Spec.Containers[0].Env {
			if e.Name == vmafxv1.EnvDevice || e.Name == vmafxv1.EnvBackend {
				t.Fatalf("the Pod spec sets %s; the test needs it to come from the device plugin", e.Name)
			}
		}
		log := kubectl(t, "logs", "--namespace", ns, pod.Name)
		if !strings.Contains(log, `device="cpu"`) {
			t.Errorf("the worker's log does not show the allocated device (device=\"cpu\"):\n%s", log)
		}
	})
}
