package workerpod

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/config"
)

// TestDefaultCredentialsOnlyWhereConfigured: a worker Pod tells the worker to use the
// object storage SDKs' default credentials only where the operator's configuration says
// so; by default a job that names no Secret is anonymous.
func TestDefaultCredentialsOnlyWhereConfigured(t *testing.T) {
	for _, on := range []bool{false, true} {
		pod := New(metav1.ObjectMeta{Name: "p"}, config.WorkerConfig{Image: "w", DefaultCredentials: on}, nil, corev1.ResourceRequirements{}, nil)
		var got string
		for _, e := range pod.Spec.Containers[0].Env {
			if e.Name == vmafxv1.EnvDefaultCredentials {
				got = e.Value
			}
		}
		if want := map[bool]string{false: "", true: "true"}[on]; got != want {
			t.Errorf("DefaultCredentials %v: %s=%q, want %q", on, vmafxv1.EnvDefaultCredentials, got, want)
		}
	}
}

// TestArgsCarryTheRequest: the worker's command line is "run --request JSON" and reads
// back as the request; the store names the credentials' directory, never a credential.
func TestArgsCarryTheRequest(t *testing.T) {
	if Store(nil, nil) != nil || Store(nil, &vmafxv1.S3Options{}) != nil {
		t.Error("a job without credentials or S3 options has a store")
	}
	req := vmafxv1.NewWorkerRequest()
	req.Score = &vmafxv1.ScoreRequest{Reference: "s3://b/ref.mp4", Distorted: "s3://b/dist.mp4", Features: []string{"psnr", "cambi"}}
	req.Store = Store(&vmafxv1.Credentials{SecretRef: vmafxv1.SecretReference{Name: "bucket-keys"}}, &vmafxv1.S3Options{Region: "eu-west-1", PathStyle: true})
	args := Args(req)
	if len(args) != 3 || args[0] != "run" || args[1] != "--request" {
		t.Fatalf("args %q", args)
	}
	if want := `"store":{"credentialsDir":"` + vmafxv1.CredentialsMountPath + `","s3Region":"eu-west-1","s3PathStyle":true}`; !strings.Contains(args[2], want) ||
		strings.Contains(args[2], "bucket-keys") {
		t.Errorf("request %s, want the store %s and not the Secret's name", args[2], want)
	}
	back, err := Request(args)
	if err != nil || !reflect.DeepEqual(back, req) {
		t.Errorf("read back %+v (%v), want %+v", back, err, req)
	}
	if _, err := Request([]string{"score", "--reference", "r"}); err == nil {
		t.Error("a command line without a request reads as one")
	}
}
