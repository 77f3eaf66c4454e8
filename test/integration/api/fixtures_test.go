package api

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

func validJob(ns, name string) *vmafxv1.VmafxJob {
	return &vmafxv1.VmafxJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: vmafxv1.VmafxJobSpec{
			Reference: "file:///data/ref.yuv",
			Distorted: "file:///data/dist.yuv",
			Width:     ptr.To[int32](176),
			Height:    ptr.To[int32](144),
		},
	}
}

func validNode(ns, name string) *vmafxv1.VmafxNode {
	return &vmafxv1.VmafxNode{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       vmafxv1.VmafxNodeSpec{NodeName: name, GPUVendor: vmafxv1.VendorNVIDIA, Capacity: 4},
	}
}

func validTraining(ns, name string) *vmafxv1.VmafxModelTraining {
	return &vmafxv1.VmafxModelTraining{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       vmafxv1.VmafxModelTrainingSpec{BaseModel: "vmaf_v0.6.1", OutputRegistry: "registry.example:5000/vmafx/models"},
	}
}

var (
	corev1HostPath = corev1.HostPathVolumeSource{Path: "/var/lib/vmafx/clips"}
	corev1PVC      = corev1.PersistentVolumeClaimVolumeSource{ClaimName: "clips"}
)
