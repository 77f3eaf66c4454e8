package workerpod

import (
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
