package job

import (
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/config"
	"github.com/vmafx/vmafx/operator/internal/workerpod"
)

// TestBuildPodObjectStore checks how a job's object-store settings reach the worker: the
// Secret as read-only files, the endpoint settings and features as arguments, and no
// credential anywhere in the Pod but the Secret's name.
func TestBuildPodObjectStore(t *testing.T) {
	job := &vmafxv1.VmafxJob{
		ObjectMeta: metav1.ObjectMeta{Name: "enc", Namespace: "team-a", UID: "u1"},
		Spec: vmafxv1.VmafxJobSpec{
			Reference:    "s3://media/ref.mp4",
			Distorted:    "s3://media/dist.mp4",
			Credentials:  &vmafxv1.Credentials{SecretRef: vmafxv1.SecretReference{Name: "media-bucket"}},
			S3:           &vmafxv1.S3Options{Endpoint: "http://versitygw:7070", Region: "us-east-1", PathStyle: true},
			Features:     []vmafxv1.Feature{vmafxv1.FeaturePSNR, vmafxv1.FeatureCAMBI},
			Alignment:    &vmafxv1.Alignment{DistortedStart: 2, Frames: 100},
			Output:       ptr.To[vmafxv1.OutputURI]("s3://media/out.csv"),
			OutputFormat: vmafxv1.OutputCSV,
		},
	}
	pod := buildPod(job, 1, config.WorkerConfig{Image: "w:dev"})
	req, err := workerpod.Request(pod.Spec.Containers[0].Args)
	if err != nil {
		t.Fatal(err)
	}
	wantStore := vmafxv1.RequestStore{CredentialsDir: vmafxv1.CredentialsMountPath, S3Endpoint: "http://versitygw:7070", S3Region: "us-east-1", S3PathStyle: ptr.To(true)}
	if req.Store == nil || !reflect.DeepEqual(*req.Store, wantStore) {
		t.Errorf("store %+v, want %+v", req.Store, wantStore)
	}
	r := req.Score
	if r.Reference != "s3://media/ref.mp4" || r.Distorted != "s3://media/dist.mp4" || !slices.Equal(r.Features, []string{"psnr", "cambi"}) ||
		r.Output != "s3://media/out.csv" || r.OutputFormat != "csv" || r.Width != 0 ||
		*r.Alignment != (vmafxv1.RequestAlignment{DistortedStart: 2}) || *r.Frames != (vmafxv1.FrameRange{Count: 100}) {
		t.Errorf("score request %+v", r)
	}
	job.Spec.Alignment = &vmafxv1.Alignment{Auto: true, Window: 12}
	auto, err := workerpod.Request(buildPod(job, 1, config.WorkerConfig{Image: "w:dev"}).Spec.Containers[0].Args)
	if err != nil || *auto.Score.Alignment != (vmafxv1.RequestAlignment{Auto: true, Window: 12}) || auto.Score.Frames != nil {
		t.Errorf("auto alignment: %+v (%v), want auto with window 12, no starts and every frame", auto.Score, err)
	}
	c := pod.Spec.Containers[0]
	if len(c.EnvFrom) != 0 {
		t.Errorf("credentials must not travel as environment: envFrom %v", c.EnvFrom)
	}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			t.Errorf("credentials must not travel as environment: %s from Secret %s", e.Name, e.ValueFrom.SecretKeyRef.Name)
		}
		if e.Name == vmafxv1.EnvMemoryLimit && (e.ValueFrom == nil || e.ValueFrom.ResourceFieldRef == nil || e.ValueFrom.ResourceFieldRef.Resource != "limits.memory") {
			t.Errorf("%s = %+v, want the container's limits.memory", e.Name, e.ValueFrom)
		}
	}
	i := slices.IndexFunc(pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Secret != nil })
	if i < 0 || pod.Spec.Volumes[i].Secret.SecretName != "media-bucket" || *pod.Spec.Volumes[i].Secret.DefaultMode != 0o440 {
		t.Fatalf("no Secret volume for media-bucket with mode 0440: %+v", pod.Spec.Volumes)
	}
	m := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == pod.Spec.Volumes[i].Name })
	if m < 0 || !c.VolumeMounts[m].ReadOnly || c.VolumeMounts[m].MountPath != vmafxv1.CredentialsMountPath {
		t.Errorf("Secret mount %+v: want read-only at %s", c.VolumeMounts, vmafxv1.CredentialsMountPath)
	}
}

// TestBuildPodOutputVolume checks that a file:// output gets its PVC writable at /output
// while the input volume stays read-only at /data.
func TestBuildPodOutputVolume(t *testing.T) {
	job := &vmafxv1.VmafxJob{
		ObjectMeta: metav1.ObjectMeta{Name: "out", Namespace: "team-a"},
		Spec: vmafxv1.VmafxJobSpec{
			Reference: "file:///data/ref.y4m", Distorted: "file:///data/dist.y4m",
			Volume:       &vmafxv1.JobVolume{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "clips"}},
			Output:       ptr.To[vmafxv1.OutputURI]("file:///output/scores.json"),
			OutputVolume: &vmafxv1.OutputVolume{PersistentVolumeClaim: corev1.PersistentVolumeClaimVolumeSource{ClaimName: "results", ReadOnly: true}},
		},
	}
	pod := buildPod(job, 1, config.WorkerConfig{Image: "w:dev"})
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range pod.Spec.Containers[0].VolumeMounts {
		mounts[m.MountPath] = m
	}
	if m, ok := mounts[vmafxv1.DataMountPath]; !ok || !m.ReadOnly {
		t.Errorf("input volume mount %+v: want read-only at /data", m)
	}
	if m, ok := mounts[vmafxv1.OutputMountPath]; !ok || m.ReadOnly {
		t.Errorf("output volume mount %+v: want writable at /output", m)
	}
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == "results" && v.PersistentVolumeClaim.ReadOnly {
			t.Errorf("output PVC mounted read-only")
		}
	}
}

func TestBuildPodKueueQueue(t *testing.T) {
	for name, tc := range map[string]struct {
		jobLabel, operatorDefault, want string
	}{
		"none":                      {},
		"operator default":          {operatorDefault: "vmafx", want: "vmafx"},
		"job's own label":           {jobLabel: "team-a", want: "team-a"},
		"job's label wins":          {jobLabel: "team-a", operatorDefault: "vmafx", want: "team-a"},
		"empty job label: defaults": {jobLabel: "", operatorDefault: "vmafx", want: "vmafx"},
	} {
		t.Run(name, func(t *testing.T) {
			job := &vmafxv1.VmafxJob{ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns", Labels: map[string]string{}}}
			if tc.jobLabel != "" {
				job.Labels[vmafxv1.LabelKueueQueueName] = tc.jobLabel
			}
			pod := buildPod(job, 1, config.WorkerConfig{Image: "w:dev", KueueQueueName: tc.operatorDefault})
			got, ok := pod.Labels[vmafxv1.LabelKueueQueueName]
			if got != tc.want || ok != (tc.want != "") {
				t.Errorf("queue label = %q (present %v), want %q", got, ok, tc.want)
			}
		})
	}
}

// TestBuildPodDefaultCredentials: the setting workerpod.New puts on every worker Pod
// survives the job's own environment variables.
func TestBuildPodDefaultCredentials(t *testing.T) {
	job := &vmafxv1.VmafxJob{ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns"}}
	for _, on := range []bool{false, true} {
		pod := buildPod(job, 1, config.WorkerConfig{Image: "w:dev", DefaultCredentials: on})
		got, memory := "", false
		for _, e := range pod.Spec.Containers[0].Env {
			switch e.Name {
			case vmafxv1.EnvDefaultCredentials:
				got = e.Value
			case vmafxv1.EnvMemoryLimit:
				memory = true
			}
		}
		if want := map[bool]string{true: "true"}[on]; got != want || !memory {
			t.Errorf("DefaultCredentials %v: %s=%q (want %q), %s set: %v", on, vmafxv1.EnvDefaultCredentials, got, want, vmafxv1.EnvMemoryLimit, memory)
		}
	}
}

// TestWorkerRequestScoringBitDepth: spec.scoringBitDepth and spec.encode reach the
// worker's request, and a job without them scores at the inputs' depth.
func TestWorkerRequestScoringBitDepth(t *testing.T) {
	job := &vmafxv1.VmafxJob{Spec: vmafxv1.VmafxJobSpec{Reference: "s3://b/ref.mp4", Distorted: "s3://b/dist.mp4"}}
	if r := workerRequest(job).Score; r.ScoringBitDepth != 0 || r.Encode != nil {
		t.Errorf("default job: %+v", r)
	}
	job.Spec.ScoringBitDepth = ptr.To[int32](10)
	job.Spec.Encode = &vmafxv1.EncodeParameters{Width: ptr.To[int32](1280), Height: ptr.To[int32](720), BitDepth: ptr.To[int32](8)}
	r := workerRequest(job).Score
	if want := (vmafxv1.RequestEncode{Width: 1280, Height: 720, BitDepth: 8}); r.ScoringBitDepth != 10 || r.Encode == nil || *r.Encode != want {
		t.Errorf("request %+v, encode %+v: want scoring at 10 bits and encode %+v", r, r.Encode, want)
	}
}
