package objectstore_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

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
	for key, clip := range map[string]string{"ref.yuv": "p02_ref.yuv", "dist.yuv": "p02_dist.yuv"} {
		data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "worker/vmaf/testdata/clips", clip))
		if err != nil {
			t.Fatal(err)
		}
		s3.put(t, bucket, key, data)
	}
	args := append([]string{"--reference", "s3://" + bucket + "/ref.yuv", "--distorted", "s3://" + bucket + "/dist.yuv",
		"--credentials-dir", testutil.CredentialsDir(t, rootKeys()), "--s3-endpoint", s3.endpoint()}, rawPair...)
	probe, code, logs := runWorker(t, append(args, "--probe")...)
	if code != 0 {
		t.Fatalf("probe: exit %d\n%s", code, logs)
	}
	plan := vmafxv1.PlanChunks(probe.Frames, 3)
	for i, c := range plan {
		if _, code, logs := runWorker(t, append(args, "--chunk", strconv.Itoa(c.Start)+":"+strconv.Itoa(c.Count),
			"--total-frames", strconv.Itoa(probe.Frames), "--chunk-part", vmafxv1.ChunkPartURI(output, i))...); code != 0 {
			t.Fatalf("chunk %d: exit %d\n%s", i, code, logs)
		}
	}
	return runWorker(t, append(args, "--output", output, "--merge-parts", strconv.Itoa(len(plan)))...)
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
