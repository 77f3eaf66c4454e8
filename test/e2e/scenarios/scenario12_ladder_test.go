package scenarios

import (
	"context"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// TestEncodingLadder is scenario 12 (issue 16): a small per-title ladder, run for real. The
// reference (clip p01 as lossless FFV1, 176x144) lies in a bucket on the in-cluster S3
// server; a VmafxLadder of 2 resolutions x libx264 x 2 crf values runs 4 encode Pods
// (ffmpeg in the worker image, placed by vmafx-scheduler without a slot, so that they
// count against the namespace's worker cap; issue 29), 4 VmafxJobs that score
// the encodes scaled back to 176x144 (placed by vmafx-scheduler on scoring slots), and the
// report Pod, which writes ladder.json, ladder.csv and ladder.svg beside the encodes.
// Every other field is at its default.
func TestEncodingLadder(t *testing.T) {
	requireBaseline(t)
	endpoint := deployVersitygw(t)
	dir := encodePair(t)
	upload(t, endpoint, dir, "ref.mkv")

	ns := createNamespace(t)
	creds := bucketCredentials(t, ns)
	l := &vmafxv1.VmafxLadder{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p01"},
		Spec: vmafxv1.VmafxLadderSpec{
			Reference:   "s3://" + s3Bucket + "/p01/ref.mkv",
			Resolutions: []vmafxv1.LadderResolution{{Height: 144}, {Height: 72}},
			Codecs:      []vmafxv1.LadderCodec{{Encoder: vmafxv1.EncoderX264, Values: []int32{26, 40}}},
			Output:      "s3://" + s3Bucket + "/p01/ladder",
			ScoringSettings: vmafxv1.ScoringSettings{
				Credentials: creds,
				S3:          &vmafxv1.S3Options{Endpoint: endpoint, Region: "us-east-1", PathStyle: true},
			},
		},
	}
	if err := c.Create(t.Context(), l); err != nil {
		t.Fatal(err)
	}
	eventually(t, 8*time.Minute, "VmafxLadder p01 done", func(ctx context.Context) error {
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: l.Name}, l); err != nil {
			return err
		}
		if l.Status.Phase != vmafxv1.JobSucceeded && l.Status.Phase != vmafxv1.JobFailed {
			return fmt.Errorf("phase %q: %d of %d encoded, %d scored", l.Status.Phase, l.Status.Encoded, l.Status.Total, l.Status.Scored)
		}
		return nil
	})
	st := l.Status
	for _, r := range st.Rungs {
		t.Logf("rung %-16s %-8s %8d bit/s %6d bytes VMAF %-10s hull %v", r.Name, r.Resolution, r.Bitrate, r.Bytes, r.Score, r.Hull)
	}
	if st.Phase != vmafxv1.JobSucceeded || st.Scored != 4 {
		t.Fatalf("ladder %s with %d of 4 rungs scored: %+v", st.Phase, st.Scored, st.Rungs)
	}

	t.Run("rungs measured and scored", func(t *testing.T) {
		rate := map[string]int64{}
		for _, r := range st.Rungs {
			rate[r.Name] = r.Bitrate
			if r.Bitrate <= 0 || r.Bytes <= 0 || r.Score == "" {
				t.Errorf("rung %s: bitrate %d, bytes %d, score %q", r.Name, r.Bitrate, r.Bytes, r.Score)
			}
			var job vmafxv1.VmafxJob
			if err := c.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: r.Job}, &job); err != nil {
				t.Fatal(err)
			}
			if want := map[int32]string{144: "", 72: "88x72"}[r.Height]; job.Status.Result == nil || job.Status.Result.DistortedScaledFrom != want {
				t.Errorf("rung %s scored with distortedScaledFrom %+v, want %q", r.Name, job.Status.Result, want)
			}
		}
		if rate["144p-x264-crf26"] <= rate["144p-x264-crf40"] || rate["72p-x264-crf26"] <= rate["72p-x264-crf40"] {
			t.Errorf("bitrates %v: a lower crf must cost more bits", rate)
		}
		if len(st.Hull) == 0 {
			t.Error("no hull")
		}
	})

	t.Run("encodes ran on vmafx-scheduler without a slot", func(t *testing.T) {
		var pods corev1.PodList
		if err := c.List(t.Context(), &pods, client.InNamespace(ns), client.MatchingLabels{vmafxv1.LabelStep: "encode"}); err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) < 4 {
			t.Fatalf("%d encode Pods, want 4", len(pods.Items))
		}
		for _, p := range pods.Items {
			if p.Spec.SchedulerName != vmafxv1.SchedulerName {
				t.Errorf("encode Pod %s placed by %q", p.Name, p.Spec.SchedulerName)
			}
			if _, ok := p.Spec.Containers[0].Resources.Requests[vmafxv1.ResourceSlot]; ok {
				t.Errorf("encode Pod %s took a scoring slot", p.Name)
			}
		}
	})

	t.Run("report written beside the encodes", func(t *testing.T) {
		if cond := meta.FindStatusCondition(st.Conditions, vmafxv1.LadderReportWritten); cond == nil || cond.Status != metav1.ConditionTrue {
			t.Fatalf("ReportWritten %+v", cond)
		}
		rows, err := csv.NewReader(strings.NewReader(string(download(t, endpoint, "p01/ladder/ladder.csv")))).ReadAll()
		if err != nil || len(rows) != 5 {
			t.Errorf("ladder.csv: %d rows (%v), want a header and 4 rungs", len(rows), err)
		}
		svg := download(t, endpoint, "p01/ladder/ladder.svg")
		if err := xml.Unmarshal(svg, new(struct{})); err != nil || !strings.Contains(string(svg), "x264 hull") {
			t.Errorf("ladder.svg is not the plot (%v):\n%.300s", err, svg)
		}
		for _, r := range st.Rungs {
			if len(download(t, endpoint, "p01/ladder/"+r.Name+".mkv")) != int(r.Bytes) {
				t.Errorf("%s.mkv in the bucket is not the %d-byte encode", r.Name, r.Bytes)
			}
			download(t, endpoint, "p01/ladder/"+r.Name+".json")
		}
	})
}

// waitNamespaceGone waits until namespace ns is deleted, so that a scenario that
// recreates it (the S3 server's) does not find it Terminating.
func waitNamespaceGone(ctx context.Context, ns string) error {
	for {
		err := c.Get(ctx, types.NamespacedName{Name: ns}, &corev1.Namespace{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.New("namespace " + ns + " still there")
		case <-time.After(time.Second):
		}
	}
}
