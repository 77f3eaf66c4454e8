package scenarios

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// leaderFrames is how many black frames the misaligned distorted clip starts with.
const leaderFrames = 2

// writeMisalignedPair writes, in a folder the node can mount, p01's reference
// (p01_ref.yuv), its distorted clip behind two black leader frames and cut to the
// reference's length (p01_dist.yuv: misaligned by +2), and the pair cut by hand to the
// frames that match (cut_ref.yuv, cut_dist.yuv: the reference's first 22 frames and the
// distorted's).
func writeMisalignedPair(t *testing.T) string {
	t.Helper()
	dir := hostDir(t)
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join(testdata(), "clips", name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	ref, dist := read("p01_ref.yuv"), read("p01_dist.yuv")
	frame := int(p01.width) * int(p01.height) * 3 / 2
	frames := len(ref) / frame
	black := bytes.Repeat([]byte{128}, frame)
	for i := range int(p01.width) * int(p01.height) {
		black[i] = 16
	}
	keep := (frames - leaderFrames) * frame
	misaligned := append(bytes.Repeat(black, leaderFrames), dist[:keep]...)
	for name, data := range map[string][]byte{
		"p01_ref.yuv": ref, "p01_dist.yuv": misaligned, "cut_ref.yuv": ref[:keep], "cut_dist.yuv": dist[:keep],
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestAlignment is scenario 16 (issue 31): a distorted clip that starts with two black
// leader frames. Scored as it is, the job succeeds with its score kept, but its Aligned
// condition is False and a LikelyMisaligned Warning event names offset +2. Scored with
// spec.alignment.auto, the job's status.result.alignment shows offset +2 and its score
// equals, to the printed digit, the score of the same frames cut by hand.
func TestAlignment(t *testing.T) {
	requireBaseline(t)
	ns := createNamespace(t)
	dir := writeMisalignedPair(t)
	plain := newJob(ns, "as-is", p01)
	auto := newJob(ns, "auto", p01)
	auto.Spec.Alignment = &vmafxv1.Alignment{Auto: true}
	cut := newJob(ns, "cut-by-hand", p01)
	cut.Spec.Reference, cut.Spec.Distorted = "file:///data/cut_ref.yuv", "file:///data/cut_dist.yuv"
	for _, job := range []*vmafxv1.VmafxJob{plain, auto, cut} {
		job.Spec.Volume.HostPath.Path = dir
		if err := c.Create(t.Context(), job); err != nil {
			t.Fatal(err)
		}
	}
	done := map[string]*vmafxv1.VmafxJob{}
	for _, job := range []*vmafxv1.VmafxJob{plain, auto, cut} {
		got := waitJobDone(t, client.ObjectKeyFromObject(job), 3*time.Minute)
		if got.Status.Phase != vmafxv1.JobSucceeded {
			t.Fatalf("job %s: phase %s: %s", job.Name, got.Status.Phase, got.Status.Message)
		}
		done[job.Name] = got
	}

	t.Run("scored as it is: score kept, Aligned False, a Warning event names the offset", func(t *testing.T) {
		job := done[plain.Name]
		a := job.Status.Result.Alignment
		if a == nil || !a.Misaligned || a.Auto || a.Offset != leaderFrames {
			t.Fatalf("status.result.alignment %+v, want misaligned at offset +%d", a, leaderFrames)
		}
		if job.Status.Score == "" || job.Status.Result.Frames != 24 {
			t.Errorf("score %q over %d frames, want the score of all 24 frames kept", job.Status.Score, job.Status.Result.Frames)
		}
		cond := meta.FindStatusCondition(job.Status.Conditions, vmafxv1.JobAligned)
		if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != "LikelyMisaligned" || !strings.Contains(cond.Message, "offset +2") {
			t.Errorf("Aligned condition %+v, want False, LikelyMisaligned, naming offset +2", cond)
		}
		eventually(t, 30*time.Second, "LikelyMisaligned event on the job", func(ctx context.Context) error {
			var events eventsv1.EventList
			if err := c.List(ctx, &events, client.InNamespace(ns)); err != nil {
				return err
			}
			for _, e := range events.Items {
				if e.Regarding.UID == job.UID && e.Reason == "LikelyMisaligned" {
					if e.Type != "Warning" || !strings.Contains(e.Note, "offset +2") {
						return fmt.Errorf("event %s %q, want a Warning naming offset +2", e.Type, e.Note)
					}
					return nil
				}
			}
			return errors.New("no LikelyMisaligned event for the job")
		})
	})

	t.Run("auto-aligned: offset +2 in the status, the score of the frames cut by hand", func(t *testing.T) {
		job, want := done[auto.Name], done[cut.Name]
		a := job.Status.Result.Alignment
		if a == nil || !a.Auto || a.Misaligned || a.Offset != leaderFrames || a.DistortedStart != leaderFrames || a.ReferenceStart != 0 {
			t.Fatalf("status.result.alignment %+v, want auto at offset +%d", a, leaderFrames)
		}
		if conf, err := strconv.ParseFloat(a.Confidence, 64); err != nil || conf < 0.2 || !strings.HasPrefix(a.Measure, "luma-psnr-thumbnail: ") {
			t.Errorf("confidence %q, measure %q", a.Confidence, a.Measure)
		}
		cond := meta.FindStatusCondition(job.Status.Conditions, vmafxv1.JobAligned)
		if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != "AutoAligned" {
			t.Errorf("Aligned condition %+v, want True, AutoAligned", cond)
		}
		if job.Status.Score != want.Status.Score || job.Status.Result.Frames != want.Status.Result.Frames {
			t.Errorf("auto-aligned score %s over %d frames, the hand-cut pair's %s over %d", job.Status.Score, job.Status.Result.Frames,
				want.Status.Score, want.Status.Result.Frames)
		}
		if got := kubectl(t, "-n", ns, "get", "vmjob", auto.Name, "-o", "jsonpath={.status.result.alignment.offset}"); got != "2" {
			t.Errorf("kubectl get: status.result.alignment.offset %q, want 2", got)
		}
		t.Logf("auto-aligned: offset %+d, confidence %s, %s; score %s (hand-cut %s); as scored: %s",
			a.Offset, a.Confidence, a.Measure, job.Status.Score, want.Status.Score, done[plain.Name].Status.Score)
	})
}
