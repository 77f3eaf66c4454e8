package scenarios

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// envVersitygw is the versitygw binary `make e2e` builds (hack/tools/versitygw).
const envVersitygw = "VMAFX_VERSITYGW"

// The in-cluster S3 server of testdata/versitygw.yaml and its root keys.
const (
	s3Namespace = "vmafx-storage"
	s3AccessKey = "e2e-access-key"
	s3SecretKey = "e2e-secret-key-not-for-production"
	s3Bucket    = "clips"
)

// TestObjectStorage is scenario 8, the seeds' e2e case 04: an encoded pair in a bucket on
// an S3 server running in the cluster, scored by a VmafxJob that names the bucket's keys
// in a Secret and leaves every other field at its default. The job must succeed with the
// same score as the same files read through file://, write its per-frame output back to
// the bucket, and show the keys nowhere: not in status, events, the Pod or the logs.
func TestObjectStorage(t *testing.T) {
	requireBaseline(t)
	endpoint := deployVersitygw(t)
	dir := encodePair(t)
	upload(t, endpoint, dir, "ref.mkv", "dist.mp4")

	ns := createNamespace(t)
	creds := bucketCredentials(t, ns)
	fromBucket := &vmafxv1.VmafxJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "from-bucket"},
		Spec: vmafxv1.VmafxJobSpec{
			Reference:   "s3://" + s3Bucket + "/p01/ref.mkv",
			Distorted:   "s3://" + s3Bucket + "/p01/dist.mp4",
			Credentials: creds,
			S3:          &vmafxv1.S3Options{Endpoint: endpoint, Region: "us-east-1", PathStyle: true},
			Output:      ptr.To[vmafxv1.OutputURI]("s3://" + s3Bucket + "/p01/out.json"),
			WorstFrames: &vmafxv1.WorstFrames{Count: ptr.To[int32](3), Pictures: true},
		},
	}
	fromFiles := &vmafxv1.VmafxJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "from-files"},
		Spec: vmafxv1.VmafxJobSpec{
			Reference: "file:///data/ref.mkv",
			Distorted: "file:///data/dist.mp4",
			Volume: &vmafxv1.JobVolume{HostPath: &corev1.HostPathVolumeSource{
				Path: dir, Type: ptr.To(corev1.HostPathDirectory),
			}},
		},
	}
	for _, j := range []*vmafxv1.VmafxJob{fromBucket, fromFiles} {
		if err := c.Create(t.Context(), j); err != nil {
			t.Fatal(err)
		}
	}
	bucketJob := waitJobDone(t, client.ObjectKeyFromObject(fromBucket), 4*time.Minute)
	fileJob := waitJobDone(t, client.ObjectKeyFromObject(fromFiles), 4*time.Minute)
	for _, j := range []*vmafxv1.VmafxJob{bucketJob, fileJob} {
		if j.Status.Phase != vmafxv1.JobSucceeded {
			t.Fatalf("job %s: phase %s: %s", j.Name, j.Status.Phase, j.Status.Message)
		}
	}

	t.Run("same score as the files", func(t *testing.T) {
		if bucketJob.Status.Score != fileJob.Status.Score || bucketJob.Status.Result.Frames != fileJob.Status.Result.Frames {
			t.Errorf("from the bucket %s over %d frames, from files %s over %d", bucketJob.Status.Score,
				bucketJob.Status.Result.Frames, fileJob.Status.Score, fileJob.Status.Result.Frames)
		}
		if got := bucketJob.Status.Result.DistortedScaledFrom; got != "128x96" {
			t.Errorf("result.distortedScaledFrom = %q, want 128x96 (the distorted is a downscaled encode)", got)
		}
	})

	t.Run("per-frame output written to the bucket", func(t *testing.T) {
		cond := meta.FindStatusCondition(bucketJob.Status.Conditions, vmafxv1.JobOutputWritten)
		if cond == nil || cond.Status != metav1.ConditionTrue {
			t.Errorf("OutputWritten condition %+v, want True", cond)
		}
		data := download(t, endpoint, "p01/out.json")
		var out struct {
			Frames []struct {
				FrameNum int                `json:"frameNum"`
				Metrics  map[string]float64 `json:"metrics"`
			} `json:"frames"`
		}
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatalf("output is not libvmaf JSON: %v\n%.300s", err, data)
		}
		if len(out.Frames) != int(bucketJob.Status.Result.Frames) {
			t.Errorf("output has %d frames, the job scored %d", len(out.Frames), bucketJob.Status.Result.Frames)
		}
	})

	t.Run("worst frames and their pictures beside the output", func(t *testing.T) {
		r := bucketJob.Status.Result
		if len(r.WorstFrames) != 3 || r.Percentiles == nil || r.Scenes == nil || r.Report != "s3://"+s3Bucket+"/p01/out.json"+vmafxv1.ReportSuffix {
			t.Fatalf("result: worst frames %+v, percentiles %+v, scenes %+v, report %q", r.WorstFrames, r.Percentiles, r.Scenes, r.Report)
		}
		if r.WorstFrames[0].VMAF != r.Min {
			t.Errorf("worst frame %s, min %s: want equal", r.WorstFrames[0].VMAF, r.Min)
		}
		prefix := "p01/out.json" + vmafxv1.ReportSuffix
		for _, f := range r.WorstFrames {
			img, err := png.Decode(bytes.NewReader(download(t, endpoint, prefix+vmafxv1.WorstFramePicture(int(f.Index)))))
			if err != nil || img.Bounds().Dx() < 3*16 {
				t.Errorf("frame %d's picture: %v", f.Index, err)
			}
		}
		if svg := download(t, endpoint, prefix+vmafxv1.ReportPlotSVG); !bytes.Contains(svg, []byte("<svg")) {
			t.Errorf("score plot: %.200s", svg)
		}
		if !bytes.Contains(download(t, endpoint, prefix+vmafxv1.ReportJSON), []byte(`"worstFrames"`)) {
			t.Error("report.json lists no worst frames")
		}
	})

	t.Run("the keys appear nowhere", func(t *testing.T) {
		var pod corev1.Pod
		if err := c.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: bucketJob.Status.PodName}, &pod); err != nil {
			t.Fatal(err)
		}
		var events eventsv1.EventList
		if err := c.List(t.Context(), &events, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		places := map[string]any{"job": bucketJob, "pod": pod, "events": events}
		for what, obj := range places {
			data, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(data, []byte(s3SecretKey)) || bytes.Contains(data, []byte(s3AccessKey)) {
				t.Errorf("the %s shows the bucket's keys", what)
			}
		}
		log := kubectl(t, "logs", "--namespace", ns, pod.Name)
		if strings.Contains(log, s3SecretKey) || strings.Contains(log, s3AccessKey) {
			t.Errorf("the worker's log shows the bucket's keys")
		}
	})
}

// deployVersitygw imports the versitygw image, applies testdata/versitygw.yaml, waits for
// it to serve, and returns its endpoint URL (the Service's ClusterIP: no cluster DNS).
// bucketCredentials creates in ns the Secret with the in-cluster bucket's keys and returns
// the spec.credentials that names it.
func bucketCredentials(t testing.TB, ns string) *vmafxv1.Credentials {
	t.Helper()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "clips-bucket"},
		StringData: map[string]string{"AWS_ACCESS_KEY_ID": s3AccessKey, "AWS_SECRET_ACCESS_KEY": s3SecretKey},
	}
	if err := c.Create(t.Context(), secret); err != nil {
		t.Fatal(err)
	}
	return &vmafxv1.Credentials{SecretRef: vmafxv1.SecretReference{Name: secret.Name}}
}

func deployVersitygw(t *testing.T) string {
	t.Helper()
	bin := os.Getenv(envVersitygw)
	if bin == "" {
		t.Fatalf("%s is not set: `make e2e` builds versitygw and sets it", envVersitygw)
	}
	// The archive goes to a temporary folder, not the harness's default under the
	// current directory (this package's, in a test).
	args := append([]string{"image", bin, "versitygw"}, strings.Fields(os.Getenv(envClusterFlags))...)
	cluster := exec.CommandContext(t.Context(), os.Getenv(envCluster), append(args, "-out", t.TempDir())...)
	if out, err := cluster.CombinedOutput(); err != nil {
		t.Fatalf("importing the versitygw image: %v\n%s", err, out)
	}
	// Another scenario's server may still be going, its namespace Terminating: applying
	// into it would be refused.
	eventually(t, 2*time.Minute, "namespace "+s3Namespace+" gone or live", func(ctx context.Context) error {
		var ns corev1.Namespace
		err := c.Get(ctx, types.NamespacedName{Name: s3Namespace}, &ns)
		if err == nil && ns.DeletionTimestamp != nil {
			return fmt.Errorf("namespace %s is terminating", s3Namespace)
		}
		return client.IgnoreNotFound(err)
	})
	manifest := filepath.Join("testdata", "versitygw.yaml")
	kubectl(t, "apply", "-f", manifest)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s3Namespace}}
		if err := c.Delete(ctx, ns); err != nil {
			t.Logf("deleting namespace %s: %v", s3Namespace, err)
		}
		// Scenario 8 and 11 both deploy the server: the next one must not find its
		// namespace Terminating, whichever runs first.
		if err := waitNamespaceGone(ctx, s3Namespace); err != nil {
			t.Logf("waiting for namespace %s to go: %v", s3Namespace, err)
		}
	})
	eventually(t, 2*time.Minute, "versitygw ready", func(ctx context.Context) error {
		var d appsv1.Deployment
		if err := c.Get(ctx, types.NamespacedName{Namespace: s3Namespace, Name: "versitygw"}, &d); err != nil {
			return err
		}
		if d.Status.ReadyReplicas != 1 {
			return fmt.Errorf("%d ready replicas", d.Status.ReadyReplicas)
		}
		return nil
	})
	return "http://" + serviceAddress(t, s3Namespace, "versitygw", 7070)
}

// encodePair encodes clip pair p01 as a user's files would be: the reference lossless
// (FFV1 in Matroska), the distorted as H.264 in MP4 at a lower resolution, its index at
// the end as ffmpeg writes it by default (so the worker must spool it to seek). The
// folder is readable by the worker's user, for the file:// job's hostPath.
func encodePair(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "vmafx-e2e-encoded-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	clips := filepath.Join(testdata(), "clips")
	raw := []string{"-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", "176x144", "-r", "24"}
	encode := func(args ...string) {
		cmd := exec.CommandContext(t.Context(), "ffmpeg", append([]string{"-nostdin", "-hide_banner", "-loglevel", "error", "-y"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	encode(append(raw, "-i", filepath.Join(clips, "p01_ref.yuv"), "-c:v", "ffv1", "ref.mkv")...)
	encode(append(raw, "-i", filepath.Join(clips, "p01_dist.yuv"), "-vf", "scale=128:96", "-c:v", "libx264", "-crf", "28", "-pix_fmt", "yuv420p", "dist.mp4")...)
	for _, f := range []string{"ref.mkv", "dist.mp4"} {
		if err := os.Chmod(filepath.Join(dir, f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// s3Client talks to the in-cluster server from this machine, as a user's upload would.
func s3Client(endpoint string) *s3.Client {
	return s3.New(s3.Options{
		BaseEndpoint: aws.String(endpoint),
		Region:       "us-east-1",
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(s3AccessKey, s3SecretKey, ""),
	})
}

func upload(t *testing.T, endpoint, dir string, files ...string) {
	t.Helper()
	s := s3Client(endpoint)
	if _, err := s.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: aws.String(s3Bucket)}); err != nil {
		t.Fatalf("creating bucket %s: %v", s3Bucket, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(s3Bucket), Key: aws.String("p01/" + f), Body: bytes.NewReader(data)}); err != nil {
			t.Fatalf("uploading %s: %v", f, err)
		}
	}
}

func download(t *testing.T, endpoint, key string) []byte {
	t.Helper()
	out, err := s3Client(endpoint).GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String(s3Bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("downloading %s: %v", key, err)
	}
	defer out.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(out.Body); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
