package job

import (
	"strconv"
	"strings"

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
	outputVolume    = "output"
	credentials     = "credentials"
	scratchVolume   = "scratch"
	scratchPath     = "/tmp"
	workerUID       = 65532 // the "nonroot" user of distroless-style images
	terminationPath = "/dev/termination-log"
	// scratchSizeLimit bounds the scratch emptyDir: the worker's default spool limit
	// (20 GiB) and room for the rest.
	scratchSizeLimit = "21Gi"
)

// buildPod returns the worker Pod for attempt n of job.
func buildPod(job *vmafxv1.VmafxJob, n int32, w config.WorkerConfig) *corev1.Pod {
	spec := job.Spec
	backend := spec.Backend // defaulted by the API server (the CRD's +kubebuilder:default)
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
				Name:            containerName,
				Image:           w.Image,
				ImagePullPolicy: w.PullPolicy,
				Args:            workerArgs(job),
				// The worker sizes its threads and Go's memory limit to the container's.
				Env: []corev1.EnvVar{{Name: vmafxv1.EnvMemoryLimit, ValueFrom: &corev1.EnvVarSource{
					ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: containerName, Resource: "limits.memory"},
				}}},
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
			// Encoded inputs that must be seeked (an MP4 with its index at the end) are spooled
			// there, up to the worker's --spool-limit of 20 GiB; the size limit keeps a
			// runaway writer from filling the node (the kubelet evicts the Pod instead).
			Volumes: []corev1.Volume{{Name: scratchVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
				SizeLimit: ptr.To(resource.MustParse(scratchSizeLimit)),
			}}}},
		},
	}
	if q := queueName(job, w); q != "" {
		pod.Labels[vmafxv1.LabelKueueQueueName] = q
	}
	addVolume := func(name string, src corev1.VolumeSource, path string, readOnly bool) {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: name, VolumeSource: src})
		c := &pod.Spec.Containers[0]
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: name, MountPath: path, ReadOnly: readOnly})
	}
	if spec.Volume != nil {
		addVolume(dataVolumeName, readOnlySource(spec.Volume), vmafxv1.DataMountPath, true)
	}
	if spec.OutputVolume != nil {
		pvc := spec.OutputVolume.PersistentVolumeClaim
		pvc.ReadOnly = false
		addVolume(outputVolume, corev1.VolumeSource{PersistentVolumeClaim: &pvc}, vmafxv1.OutputMountPath, false)
	}
	if len(w.PlainHTTPRegistries) > 0 {
		c := &pod.Spec.Containers[0]
		c.Env = append(c.Env, corev1.EnvVar{Name: vmafxv1.EnvRegistryPlainHTTP, Value: strings.Join(w.PlainHTTPRegistries, ",")})
	}
	if spec.Credentials != nil {
		// Files rather than environment variables: the worker's ffmpeg child and anything
		// that dumps the environment never see them. 0440 with fsGroup: readable by the
		// worker's group only. A missing Secret keeps the Pod from starting
		// (CreateContainerConfigError), which the job reports.
		addVolume(credentials, corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName:  spec.Credentials.SecretRef.Name,
			DefaultMode: ptr.To[int32](0o440),
		}}, vmafxv1.CredentialsMountPath, true)
	}
	return pod
}

// queueName is the Kueue LocalQueue of job's worker Pods: the job's own label, else the
// operator's default, else none (Kueue, if installed, leaves the Pods alone).
func queueName(job *vmafxv1.VmafxJob, w config.WorkerConfig) string {
	if q := job.Labels[vmafxv1.LabelKueueQueueName]; q != "" {
		return q
	}
	return w.KueueQueueName
}

// workerArgs is the vmafx-worker command line for job. It never carries credentials:
// those reach the worker as the files of spec.credentials' Secret.
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
		args = append(args, "--model", string(s.Model))
	}
	if s.Output != nil {
		args = append(args, "--output", string(*s.Output))
		if s.OutputFormat != "" {
			args = append(args, "--output-format", string(s.OutputFormat))
		}
	}
	if len(s.Features) > 0 {
		names := make([]string, len(s.Features))
		for i, f := range s.Features {
			names[i] = string(f)
		}
		args = append(args, "--features", strings.Join(names, ","))
	}
	if s.Deinterlace {
		args = append(args, "--deinterlace")
	}
	if a := s.Alignment; a != nil {
		args = append(args, "--align", "--reference-start", strconv.Itoa(int(a.ReferenceStart)),
			"--distorted-start", strconv.Itoa(int(a.DistortedStart)), "--frames", ":"+strconv.Itoa(int(a.Frames)))
	}
	if s.Credentials != nil {
		args = append(args, "--credentials-dir", vmafxv1.CredentialsMountPath)
	}
	if o := s.S3; o != nil {
		if o.Endpoint != "" {
			args = append(args, "--s3-endpoint", o.Endpoint)
		}
		if o.Region != "" {
			args = append(args, "--s3-region", o.Region)
		}
		if o.PathStyle {
			args = append(args, "--s3-path-style")
		}
	}
	return args
}
