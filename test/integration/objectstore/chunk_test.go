package objectstore_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/testutil"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// The raw test pair of the kernel's reference data: 176x144 yuv420p, 16 frames.
var rawPair = []string{"--width", "176", "--height", "144", "--pixel-format", "yuv420p"}

// keys lists the objects of bucket under prefix.
func (s *server) keys(t *testing.T, bucket, prefix string) []string {
	t.Helper()
	out, err := s.client().ListObjectsV2(context.Background(), &awss3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	if err != nil {
		t.Fatalf("listing %s/%s: %v", bucket, prefix, err)
	}
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	slices.Sort(keys)
	return keys
}

// chunkedJob runs the steps of a job split in three as the operator runs them, inputs
// and output in bucket: the probe, the chunks, each writing its part beside the output,
// and the merge, whose result it returns.
func chunkedJob(t *testing.T, bucket, output string) (*vmafxv1.WorkerResult, int, string) {
	t.Helper()
	args, merge := scoreChunks(t, bucket, output)
	return runWorker(t, append(args, merge...)...)
}

// scoreChunks uploads the inputs to bucket and runs the probe and the chunks of a job split
// in three; it returns the job's worker arguments and what the merge adds to them.
func scoreChunks(t *testing.T, bucket, output string) (args, merge []string) {
	t.Helper()
	for key, clip := range map[string]string{"ref.yuv": "p02_ref.yuv", "dist.yuv": "p02_dist.yuv"} {
		data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "vmaf/testdata/clips", clip))
		if err != nil {
			t.Fatal(err)
		}
		s3.put(t, bucket, key, data)
	}
	args = append([]string{"--reference", "s3://" + bucket + "/ref.yuv", "--distorted", "s3://" + bucket + "/dist.yuv",
		"--credentials-dir", testutil.CredentialsDir(t, rootKeys())}, rawPair...)
	withEndpoint := append(slices.Clip(args), "--s3-endpoint", s3.endpoint())
	probe, code, logs := runWorker(t, append(withEndpoint, "--probe")...)
	if code != 0 {
		t.Fatalf("probe: exit %d\n%s", code, logs)
	}
	plan := vmafxv1.PlanChunks(probe.Frames, 3)
	for i, c := range plan {
		if _, code, logs := runWorker(t, append(withEndpoint, "--chunk", strconv.Itoa(c.Start)+":"+strconv.Itoa(c.Count),
			"--total-frames", strconv.Itoa(probe.Frames), "--chunk-part", vmafxv1.ChunkPartURI(output, i))...); code != 0 {
			t.Fatalf("chunk %d: exit %d\n%s", i, code, logs)
		}
	}
	return withEndpoint, []string{"--output", output, "--merge-parts", strconv.Itoa(len(plan))}
}

// A merge process killed (SIGKILL, as when its node is lost) after it wrote the output
// and removed the first part reports nothing; its replacement finds the record the merge
// wrote before removing anything, reports the same score as an unsplit run, and leaves
// only the output in the bucket. The kill is real: the first merge reaches the S3 server
// through a proxy that holds the second part's DELETE until the test has killed it.
func TestMergeKilledWhileRemovingParts(t *testing.T) {
	bucket := s3.bucket(t)
	output := "s3://" + bucket + "/results/killed.json"
	args, merge := scoreChunks(t, bucket, output)

	target, err := url.Parse(s3.endpoint())
	if err != nil {
		t.Fatal(err)
	}
	forward := httputil.NewSingleHostReverseProxy(target) // keeps the Host the request was signed for
	var deletes atomic.Int32
	secondDelete, killed := make(chan struct{}), make(chan struct{})
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete && deletes.Add(1) == 2 {
			close(secondDelete)
			<-killed
			http.Error(w, "the client is gone", http.StatusServiceUnavailable)
			return
		}
		forward.ServeHTTP(w, r)
	}))
	defer proxy.Close()

	viaProxy := slices.Clip(args[:len(args)-2]) // without --s3-endpoint
	cmd := exec.Command(workerBinary, append(append([]string{"score", "--termination-log", filepath.Join(t.TempDir(), "term"),
		"--s3-endpoint", proxy.URL}, viaProxy...), merge...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-secondDelete:
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the merge never removed a second part\n%s", stderr.String())
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	close(killed)
	left := s3.keys(t, bucket, "results/")
	want := []string{"results/killed.json", "results/killed.json.chunk-001", "results/killed.json.chunk-002", "results/killed.json.chunks-merged"}
	if !slices.Equal(left, want) {
		t.Fatalf("after the kill the bucket holds %v, want %v\n%s", left, want, stderr.String())
	}
	written := s3.get(t, bucket, "results/killed.json")

	got, code, logs := runWorker(t, append(args, merge...)...)
	if code != 0 || got.Error != nil {
		t.Fatalf("replacement merge: exit %d, %+v\n%s", code, got.Error, logs)
	}
	one, code, logs := runWorker(t, args...)
	if code != 0 {
		t.Fatalf("unsplit run: exit %d\n%s", code, logs)
	}
	if got.Score != one.Score || got.HarmonicMean != one.HarmonicMean || got.Min != one.Min || got.Max != one.Max || got.Frames != one.Frames {
		t.Errorf("replacement merge reported %+v, want the unsplit run's %+v", got, one)
	}
	if keys := s3.keys(t, bucket, "results/"); !slices.Equal(keys, []string{"results/killed.json"}) {
		t.Errorf("after the replacement the bucket holds %v, want only the output", keys)
	}
	if now := s3.get(t, bucket, "results/killed.json"); !bytes.Equal(now, written) {
		t.Error("the replacement rewrote the output")
	}
}

// A chunked job's merge writes the output to the bucket and then removes the parts
// beside it, with the job's credentials.
func TestMergeRemovesPartsFromTheBucket(t *testing.T) {
	bucket := s3.bucket(t)
	got, code, logs := chunkedJob(t, bucket, "s3://"+bucket+"/results/split.json")
	if code != 0 || got.Error != nil || got.OutputError != "" {
		t.Fatalf("merge: exit %d, %+v, output error %q\n%s", code, got.Error, got.OutputError, logs)
	}
	if got.Frames != 16 {
		t.Errorf("merged %d frames, want 16", got.Frames)
	}
	if keys := s3.keys(t, bucket, "results/"); !slices.Equal(keys, []string{"results/split.json"}) {
		t.Errorf("the bucket holds %v after the merge, want only the output", keys)
	}
}

// A merge that cannot write its output keeps the score and every part: the parts are
// removed only once the output they were merged into is written. Here the output's key
// is a folder of the server's file system (an object below it exists), which versitygw
// refuses to overwrite.
func TestMergeWithoutOutputKeepsParts(t *testing.T) {
	bucket := s3.bucket(t)
	s3.put(t, bucket, "results/split.json/taken", []byte("x"))
	got, code, logs := chunkedJob(t, bucket, "s3://"+bucket+"/results/split.json")
	if code != 0 || got.Error != nil || got.Frames != 16 {
		t.Fatalf("merge: exit %d, %+v, %d frames; want the score kept\n%s", code, got.Error, got.Frames, logs)
	}
	if got.OutputError == "" {
		t.Fatalf("the output was written over a folder; the test needs a refused output\n%s", logs)
	}
	want := []string{"results/split.json.chunk-000", "results/split.json.chunk-001", "results/split.json.chunk-002", "results/split.json/taken"}
	if keys := s3.keys(t, bucket, "results/"); !slices.Equal(keys, want) {
		t.Errorf("the bucket holds %v after a merge that wrote no output, want %v", keys, want)
	}
}
