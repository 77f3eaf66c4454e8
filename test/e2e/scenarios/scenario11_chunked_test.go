package scenarios

import (
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// TestChunkedJob is scenario 11 (issue 16): the same encoded pair in the in-cluster
// bucket scored by a job of parallelism 2 (a probe Pod, two chunk Pods, a merge Pod, all
// placed by vmafx-scheduler) and by a job left at the default, one Pod. The results and
// the per-frame outputs must be the same to the last digit (but the speed).
func TestChunkedJob(t *testing.T) {
	requireBaseline(t)
	endpoint := deployVersitygw(t)
	upload(t, endpoint, encodePair(t), "ref.mkv", "dist.mp4")

	ns := createNamespace(t)
	creds := bucketCredentials(t, ns)
	job := func(name string, parallelism int32) *vmafxv1.VmafxJob {
		return &vmafxv1.VmafxJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: vmafxv1.VmafxJobSpec{
				Reference:   "s3://" + s3Bucket + "/p01/ref.mkv",
				Distorted:   "s3://" + s3Bucket + "/p01/dist.mp4",
				Credentials: creds,
				S3:          &vmafxv1.S3Options{Endpoint: endpoint, Region: "us-east-1", PathStyle: true},
				Output:      ptr.To(vmafxv1.OutputURI("s3://" + s3Bucket + "/chunked/" + name + ".json")),
				Parallelism: parallelism,
			},
		}
	}
	one, two := job("one-pod", 0), job("two-chunks", 2)
	for _, j := range []*vmafxv1.VmafxJob{one, two} {
		if err := c.Create(t.Context(), j); err != nil {
			t.Fatal(err)
		}
	}
	one = waitJobDone(t, client.ObjectKeyFromObject(one), 4*time.Minute)
	two = waitJobDone(t, client.ObjectKeyFromObject(two), 6*time.Minute)
	for _, j := range []*vmafxv1.VmafxJob{one, two} {
		if j.Status.Phase != vmafxv1.JobSucceeded {
			t.Fatalf("job %s: phase %s: %s", j.Name, j.Status.Phase, j.Status.Message)
		}
	}

	t.Run("same result", func(t *testing.T) {
		w, g := *one.Status.Result, *two.Status.Result
		w.FPS, g.FPS = "", "" // one Pod's speed, the whole chunked job's
		// A chunk sees only its window, so a chunked job has no scenes and writes no report
		// (docs/worker.md); its worst frames and percentiles must equal one Pod's.
		if g.Scenes != nil || g.Report != "" {
			t.Errorf("chunked job has scenes %+v and report %q; want none", g.Scenes, g.Report)
		}
		w.Scenes, w.Report = nil, ""
		if diff := cmp.Diff(w, g); diff != "" {
			t.Errorf("result of parallelism 2 differs from one Pod's (-want,+got):\n%s", diff)
		}
		if c := two.Status.Chunks; c == nil || c.Progress != "2/2" || c.States != "DD" || c.Frames != w.Frames {
			t.Errorf("status.chunks %+v; want 2/2 done over %d frames", c, w.Frames)
		}
	})

	t.Run("same per-frame output", func(t *testing.T) {
		fps := regexp.MustCompile(`(?m)^  "fps": .*$`)
		want := fps.ReplaceAllString(string(download(t, endpoint, "chunked/one-pod.json")), "")
		got := fps.ReplaceAllString(string(download(t, endpoint, "chunked/two-chunks.json")), "")
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("per-frame output of parallelism 2 differs from one Pod's (-want,+got):\n%s", diff)
		}
	})

	t.Run("one Pod per step, placed by vmafx-scheduler", func(t *testing.T) {
		var pods corev1.PodList
		if err := c.List(t.Context(), &pods, client.InNamespace(ns), client.MatchingLabels{vmafxv1.LabelJob: "two-chunks"}); err != nil {
			t.Fatal(err)
		}
		var steps []string
		for _, p := range pods.Items {
			steps = append(steps, p.Labels[vmafxv1.LabelChunk])
			if p.Spec.SchedulerName != vmafxv1.SchedulerName || p.Spec.NodeName == "" || p.Status.Phase != corev1.PodSucceeded {
				t.Errorf("Pod %s: scheduler %s, node %q, phase %s", p.Name, p.Spec.SchedulerName, p.Spec.NodeName, p.Status.Phase)
			}
		}
		slices.Sort(steps)
		if diff := cmp.Diff([]string{"0", "1", "merge", "probe"}, steps); diff != "" {
			t.Errorf("steps of the chunked job (-want,+got):\n%s", diff)
		}
	})
}
