package job

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/config"
)

// Names inside a worker Pod.
const (
	containerName   = "worker"
	dataVolumeName  = "data"
	scratchVolume   = "scratch"
	scratchPath     = "/tmp"
	workerUID       = 65532 // the "nonroot" user of distroless-style images
	terminationPath = "/dev/termination-log"
)

// buildPod returns the worker Pod for attempt n of job.
func buildPod(job *vmafxv1.VmafxJob, n int32, w config.WorkerConfig) *corev1.Pod {
	spec := job.Spec
	backend := spec.Backend
	if backend == "" {
		backend = vmafxv1.BackendAuto
	}
	resources := *w.Resources.DeepCopy()
	if resources.Limits == nil {
		resources.Limits = corev1.ResourceList{}
	}
	if resources.Requests == nil {
		resources.Requests = corev1.ResourceList{}
	}
	// Extended resources must be requested and limited alike.
	resources.Limits[vmafxv1.ResourceSlot] = resource.MustParse("1")
	resources.Requests[vmafxv1.ResourceSlot] = resource.MustParse("1")

	name := PodName(job, n)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:       name,
			Namespace:  job.Namespace,
			Finalizers: []string{vmafxv1.FinalizerResult},
			Labels: map[string]string{
				vmafxv1.LabelJob:               vmafxv1.JobLabelValue(job.Name),
				vmafxv1.LabelAttempt:           strconv.Itoa(int(n)),
				"app.kubernetes.io/name":       "vmafx-worker",
				"app.kubernetes.io/managed-by": "vmafx-operator",
			},
			Annotations: map[string]string{
				vmafxv1.AnnotationBackend:  string(backend),
				vmafxv1.AnnotationPriority: strconv.Itoa(int(spec.Priority)),
				vmafxv1.AnnotationJobName:  job.Name,
			},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, vmafxv1.GroupVersion.WithKind("VmafxJob"))},
		},
		Spec: corev1.PodSpec{
			SchedulerName:                 vmafxv1.SchedulerName,
			Hostname:                      hostname(name),
			RestartPolicy:                 corev1.RestartPolicyNever,
			ActiveDeadlineSeconds:         spec.ActiveDeadlineSeconds,
			AutomountServiceAccountToken:  ptr.To(false),
			ServiceAccountName:            w.ServiceAccount,
			EnableServiceLinks:            ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](10),
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				RunAsUser:      ptr.To[int64](workerUID),
				RunAsGroup:     ptr.To[int64](workerUID),
				FSGroup:        ptr.To[int64](workerUID),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name:                     containerName,
				Image:                    w.Image,
				ImagePullPolicy:          w.PullPolicy,
				Args:                     workerArgs(job),
				Resources:                resources,
				TerminationMessagePath:   terminationPath,
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false),
					ReadOnlyRootFilesystem:   ptr.To(true),
					RunAsNonRoot:             ptr.To(true),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
				VolumeMounts: []corev1.VolumeMount{{Name: scratchVolume, MountPath: scratchPath}},
			}},
			// Downloaded inputs land in the scratch volume, as the root filesystem is read-only.
			Volumes: []corev1.Volume{{Name: scratchVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
	}
	if spec.Volume != nil {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: dataVolumeName, VolumeSource: readOnlySource(spec.Volume)})
		c := &pod.Spec.Containers[0]
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: dataVolumeName, MountPath: vmafxv1.DataMountPath, ReadOnly: true})
	}
	return pod
}

// workerArgs is the vmafx-worker command line for job.
func workerArgs(job *vmafxv1.VmafxJob) []string {
	s := job.Spec
	args := []string{"score", "--reference", string(s.Reference), "--distorted", string(s.Distorted)}
	if s.Width != nil && s.Height != nil {
		args = append(args, "--width", strconv.Itoa(int(*s.Width)), "--height", strconv.Itoa(int(*s.Height)))
	}
	if s.PixelFormat != "" {
		args = append(args, "--pixel-format", string(s.PixelFormat))
	}
	if s.Model != "" {
		args = append(args, "--model", s.Model)
	}
	if s.Output != nil {
		args = append(args, "--output", string(*s.Output))
	}
	return args
}
