package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// sharedInputs are the distorted videos of scenario 17, all of p01's reference: p01's own
// distorted clip, the reference itself, and three mixes of the two (the distorted clip's
// even frames, its odd frames, its first half), so that each scores differently.
var sharedInputs = []string{"dist", "same", "even", "odd", "half"}

// writeSharedInputs writes p01's reference (p01_ref.yuv) and the five distorted videos
// (<name>.yuv) in a folder the node can mount.
func writeSharedInputs(t *testing.T) string {
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
	mix := func(fromDist func(i int) bool) []byte {
		out := make([]byte, 0, len(ref))
		for i := range frames {
			src := ref
			if fromDist(i) {
				src = dist
			}
			out = append(out, src[i*frame:(i+1)*frame]...)
		}
		return out
	}
	files := map[string][]byte{
		"p01_ref.yuv": ref, "dist.yuv": dist, "same.yuv": ref,
		"even.yuv": mix(func(i int) bool { return i%2 == 0 }),
		"odd.yuv":  mix(func(i int) bool { return i%2 == 1 }),
		"half.yuv": mix(func(i int) bool { return i < frames/2 }),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestSharedReference is scenario 17 (issue 31): a VmafxComparison with
// spec.sharedReference, every other field at its default (4 renditions a Pod), scores
// five distorted videos of one reference in two jobs: a group of four that decodes the
// reference once in one Pod, and a last plain job. Each input's score equals the score
// of a VmafxJob of that video alone, and each has its own worst frames, the same as the
// job alone lists, in its row of the group's status.results and in the comparison's
// table.
func TestSharedReference(t *testing.T) {
	requireBaseline(t)
	ns := createNamespace(t)
	dir := writeSharedInputs(t)
	volume := &vmafxv1.JobVolume{HostPath: &corev1.HostPathVolumeSource{Path: dir, Type: ptr.To(corev1.HostPathDirectory)}}
	cmp := &vmafxv1.VmafxComparison{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shared"}, Spec: vmafxv1.VmafxComparisonSpec{
		Reference:       "file:///data/p01_ref.yuv",
		SharedReference: &vmafxv1.SharedReference{},
		ScoringSettings: vmafxv1.ScoringSettings{Width: ptr.To(p01.width), Height: ptr.To(p01.height), PixelFormat: p01.format, Volume: volume},
	}}
	for _, name := range sharedInputs {
		cmp.Spec.Distorted = append(cmp.Spec.Distorted, vmafxv1.ComparisonInput{Name: name, URI: vmafxv1.VideoURI("file:///data/" + name + ".yuv")})
	}
	// Each video alone, for the scores and worst frames to match.
	var alone []*vmafxv1.VmafxJob
	for _, name := range sharedInputs {
		job := newJob(ns, "alone-"+name, p01)
		job.Spec.Reference, job.Spec.Distorted = "file:///data/p01_ref.yuv", vmafxv1.VideoURI("file:///data/"+name+".yuv")
		job.Spec.Volume = volume.DeepCopy()
		alone = append(alone, job)
	}
	objs := []client.Object{cmp}
	for _, j := range alone {
		objs = append(objs, j)
	}
	for _, obj := range objs {
		if err := c.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 5*time.Minute, "VmafxComparison shared done", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(cmp), cmp); err != nil {
			return err
		}
		if !cmp.Status.Phase.Finished() {
			return fmt.Errorf("phase %q, %d of %d scored", cmp.Status.Phase, cmp.Status.Succeeded, cmp.Status.Total)
		}
		return nil
	})
	if cmp.Status.Phase != vmafxv1.JobSucceeded || cmp.Status.Succeeded != int32(len(sharedInputs)) {
		t.Fatalf("comparison: phase %s, %d of %d succeeded: %+v", cmp.Status.Phase, cmp.Status.Succeeded, len(sharedInputs), cmp.Status.Results)
	}
	aloneDone := map[string]*vmafxv1.VmafxJob{}
	for i, job := range alone {
		got := waitJobDone(t, client.ObjectKeyFromObject(job), 3*time.Minute)
		if got.Status.Phase != vmafxv1.JobSucceeded {
			t.Fatalf("job %s: phase %s: %s", job.Name, got.Status.Phase, got.Status.Message)
		}
		aloneDone[sharedInputs[i]] = got
	}

	group := &vmafxv1.VmafxJob{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "shared-dist"}, group); err != nil {
		t.Fatalf("the group's job: %v", err)
	}
	t.Run("four inputs in one group job, the fifth alone", func(t *testing.T) {
		if n := len(group.Spec.Renditions); n != vmafxv1.DefaultMaxRenditionsPerPod-1 || len(group.Status.Results) != vmafxv1.DefaultMaxRenditionsPerPod {
			t.Errorf("group job: %d renditions, %d rows; want %d and %d", n, len(group.Status.Results), vmafxv1.DefaultMaxRenditionsPerPod-1, vmafxv1.DefaultMaxRenditionsPerPod)
		}
		var jobs vmafxv1.VmafxJobList
		if err := c.List(t.Context(), &jobs, client.InNamespace(ns), client.MatchingLabels{vmafxv1.LabelComparison: vmafxv1.JobLabelValue(cmp.Name)}); err != nil {
			t.Fatal(err)
		}
		if len(jobs.Items) != 2 {
			t.Errorf("%d jobs for the comparison, want 2 (a group of 4 and one alone)", len(jobs.Items))
		}
		for _, e := range cmp.Status.Results {
			if want := map[bool]string{true: "shared-dist", false: "shared-half"}[e.Name != "half"]; e.Job != want {
				t.Errorf("input %s scored by job %s, want %s", e.Name, e.Job, want)
			}
		}
	})

	t.Run("each input's score and worst frames equal its job alone's", func(t *testing.T) {
		rows := group.RenditionRows()
		for i, e := range cmp.Status.Results {
			want := aloneDone[e.Name]
			if e.Score != want.Status.Score || e.Frames != want.Status.Result.Frames {
				t.Errorf("input %s: score %s over %d frames, alone %s over %d", e.Name, e.Score, e.Frames, want.Status.Score, want.Status.Result.Frames)
			}
			p5, worst := want.Status.Result.WorstOf()
			if e.P5 == "" || e.WorstFrame == nil || worst == nil || e.P5 != p5 || *e.WorstFrame != *worst {
				t.Errorf("input %s: table's p5 %q and worst frame %+v, alone %q and %+v", e.Name, e.P5, e.WorstFrame, p5, worst)
			}
			if i >= len(rows) {
				continue // the fifth input is its own job
			}
			row := rows[i]
			if row == nil || row.Phase != vmafxv1.JobSucceeded {
				t.Errorf("input %s: row %+v, want Succeeded", e.Name, row)
				continue
			}
			wantWorst := want.Status.Result.JobWorst
			// Compared by value: the scenes hold a pointer, which fmt would print
			// as an address.
			if len(row.WorstFrames) != vmafxv1.DefaultWorstFrames || !reflect.DeepEqual(row.WorstFrames, wantWorst.WorstFrames) ||
				!reflect.DeepEqual(row.Percentiles, wantWorst.Percentiles) || !reflect.DeepEqual(row.Scenes, wantWorst.Scenes) {
				got, _ := json.Marshal([]any{row.WorstFrames, row.Percentiles, row.Scenes})
				alone, _ := json.Marshal([]any{wantWorst.WorstFrames, wantWorst.Percentiles, wantWorst.Scenes})
				t.Errorf("input %s: row's worst frames, percentiles and scenes %s; alone %s", e.Name, got, alone)
				continue
			}
			t.Logf("input %s: VMAF %s (alone %s), worst frame %d at %s", e.Name, row.Mean, want.Status.Score, row.WorstFrames[0].Index, row.WorstFrames[0].VMAF)
		}
	})
}
