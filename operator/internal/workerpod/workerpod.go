// Package workerpod builds the hardened Pod every vmafx-worker container runs in, for
// the job controller's worker Pods and the ladder controller's encode and report Pods
// alike: non-root, read-only root filesystem with a size-limited scratch emptyDir at
// /tmp, no capabilities, no service account token, and the job's volumes and credentials
// mounted where the worker looks for them. One builder, so a hardening change reaches
// every worker Pod.
package workerpod

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/config"
)

// Names inside a worker Pod.
const (
	ContainerName   = "worker"
	DataVolume      = "data"
	OutputVolume    = "output"
	Credentials     = "credentials"
	ScratchVolume   = "scratch"
	ScratchPath     = "/tmp"
	WorkerUID       = 65532 // the "nonroot" user of distroless-style images
	TerminationPath = "/dev/termination-log"
	// ScratchSizeLimit bounds the scratch emptyDir: the worker's default spool limit
	// (20 GiB) and room for the rest.
	ScratchSizeLimit = "21Gi"
)

// New returns the hardened Pod that runs the worker image of w with args and resources.
// Downloaded inputs land in the scratch volume, as the root filesystem is read-only;
// encoded inputs that must be seeked are spooled there up to the worker's --spool-limit,
// and the size limit makes the kubelet evict a runaway writer rather than fill the node.
func New(meta metav1.ObjectMeta, w config.WorkerConfig, args []string, resources corev1.ResourceRequirements, activeDeadline *int64) *corev1.Pod {
	var env []corev1.EnvVar
	if w.DefaultCredentials {
		// Only where the operator's configuration says so: the default chain acts with the
		// node's or the worker ServiceAccount's rights, not the job author's.
		env = append(env, corev1.EnvVar{Name: vmafxv1.EnvDefaultCredentials, Value: "true"})
	}
	return &corev1.Pod{
		ObjectMeta: meta,
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			ActiveDeadlineSeconds:         activeDeadline,
			AutomountServiceAccountToken:  ptr.To(false),
			ServiceAccountName:            w.ServiceAccount,
			EnableServiceLinks:            ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](10),
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				RunAsUser:      ptr.To[int64](WorkerUID),
				RunAsGroup:     ptr.To[int64](WorkerUID),
				FSGroup:        ptr.To[int64](WorkerUID),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name:                     ContainerName,
				Image:                    w.Image,
				ImagePullPolicy:          w.PullPolicy,
				Args:                     args,
				Env:                      env,
				Resources:                resources,
				TerminationMessagePath:   TerminationPath,
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false),
					ReadOnlyRootFilesystem:   ptr.To(true),
					RunAsNonRoot:             ptr.To(true),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
				VolumeMounts: []corev1.VolumeMount{{Name: ScratchVolume, MountPath: ScratchPath}},
			}},
			Volumes: []corev1.Volume{{Name: ScratchVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
				SizeLimit: ptr.To(resource.MustParse(ScratchSizeLimit)),
			}}}},
		},
	}
}

// AddVolume mounts src at path in the worker container.
func AddVolume(pod *corev1.Pod, name string, src corev1.VolumeSource, path string, readOnly bool) {
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: name, VolumeSource: src})
	c := &pod.Spec.Containers[0]
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: name, MountPath: path, ReadOnly: readOnly})
}

// AddDataVolume mounts a job's spec.volume at /data, attached read-only where the source
// supports it, so a job can never write into what it reads.
func AddDataVolume(pod *corev1.Pod, v *vmafxv1.JobVolume) {
	AddVolume(pod, DataVolume, ReadOnlySource(v), vmafxv1.DataMountPath, true)
}

// ReadOnlySource is the Pod volume for a job's volume, attached read-only where the source
// can say so (a PVC, a CSI volume, an NFS export), not only mounted read-only: the worker
// only reads its inputs, and a shared claim must not be written through it.
func ReadOnlySource(v *vmafxv1.JobVolume) corev1.VolumeSource {
	src := *v.DeepCopy()
	if src.PersistentVolumeClaim != nil {
		src.PersistentVolumeClaim.ReadOnly = true
	}
	if src.CSI != nil {
		src.CSI.ReadOnly = ptr.To(true)
	}
	if src.NFS != nil {
		src.NFS.ReadOnly = true
	}
	return src.VolumeSource()
}

// AddOutputVolume mounts a job's spec.outputVolume, writable, at /output.
func AddOutputVolume(pod *corev1.Pod, ov vmafxv1.OutputVolume) {
	pvc := ov.PersistentVolumeClaim
	pvc.ReadOnly = false
	AddVolume(pod, OutputVolume, corev1.VolumeSource{PersistentVolumeClaim: &pvc}, vmafxv1.OutputMountPath, false)
}

// AddCredentials mounts the Secret of spec.credentials as files: the worker's ffmpeg
// child and anything that dumps the environment never see them. 0440 with fsGroup:
// readable by the worker's group only. A missing Secret keeps the Pod from starting
// (CreateContainerConfigError), which the controller reports.
func AddCredentials(pod *corev1.Pod, c vmafxv1.Credentials) {
	AddVolume(pod, Credentials, corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName:  c.SecretRef.Name,
		DefaultMode: ptr.To[int32](0o440),
	}}, vmafxv1.CredentialsMountPath, true)
}

// Store is a worker request's object store settings; never credentials, which reach the
// worker as the files of spec.credentials' Secret, mounted where CredentialsDir says.
func Store(creds *vmafxv1.Credentials, s3 *vmafxv1.S3Options) *vmafxv1.RequestStore {
	st := &vmafxv1.RequestStore{}
	if creds != nil {
		st.CredentialsDir = vmafxv1.CredentialsMountPath
	}
	if s3 != nil {
		st.S3Endpoint, st.S3Region = s3.Endpoint, s3.Region
		if s3.PathStyle {
			st.S3PathStyle = ptr.To(true)
		}
	}
	if *st == (vmafxv1.RequestStore{}) {
		return nil
	}
	return st
}

// RequestFlag is the worker's flag that carries the request's JSON.
const RequestFlag = "--request"

// Args is the worker's command line for req: "run --request JSON", the one way the
// operator tells a worker what to do. The JSON rides in the arguments rather than the
// environment: it is what "kubectl get pod -o yaml" shows under args, where a reader looks
// for what a Pod runs, and ffmpeg, the worker's child, does not inherit it. The request
// holds no credentials.
func Args(req *vmafxv1.WorkerRequest) []string {
	// A request over vmafxv1.MaxWorkerRequestBytes is not refused here: the worker
	// refuses it, and the Pod fails with that reason. The types always marshal.
	data, _ := json.Marshal(req)
	return []string{"run", RequestFlag, string(data)}
}

// Request reads back the request of a worker container's args built with Args.
func Request(args []string) (*vmafxv1.WorkerRequest, error) {
	if len(args) != 3 || args[0] != "run" || args[1] != RequestFlag {
		return nil, fmt.Errorf("worker args %q are not \"run %s JSON\"", args, RequestFlag)
	}
	return vmafxv1.ParseWorkerRequest([]byte(args[2]))
}
