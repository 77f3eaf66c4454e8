package job

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/config"
	"github.com/vmafx/vmafx/operator/internal/workerpod"
)

// buildPod returns the worker Pod for attempt n of job: the hardened worker Pod
// (workerpod.New) with a scoring slot, placed by vmafx-scheduler, and the job's volumes.
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
	if hasRenditions(job) {
		addRenditionMemory(resources, job, len(missingRenditions(job)))
	}
	// Extended resources must be requested and limited alike.
	resources.Limits[vmafxv1.ResourceSlot] = resource.MustParse("1")
	resources.Requests[vmafxv1.ResourceSlot] = resource.MustParse("1")

	name := PodName(job, n)
	pod := workerpod.New(metav1.ObjectMeta{
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
	}, w, workerpod.Args(workerRequest(job)), resources, spec.ActiveDeadlineSeconds)
	pod.Spec.SchedulerName = vmafxv1.SchedulerName
	pod.Spec.Hostname = hostname(name)
	c := &pod.Spec.Containers[0]
	// The worker sizes its threads and Go's memory limit to the container's.
	// Appended: workerpod.New sets what every worker Pod gets (VMAFX_DEFAULT_CREDENTIALS).
	c.Env = append(c.Env, corev1.EnvVar{Name: vmafxv1.EnvMemoryLimit, ValueFrom: &corev1.EnvVarSource{
		ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: workerpod.ContainerName, Resource: "limits.memory"},
	}})
	if len(w.PlainHTTPRegistries) > 0 {
		c.Env = append(c.Env, corev1.EnvVar{Name: vmafxv1.EnvRegistryPlainHTTP, Value: strings.Join(w.PlainHTTPRegistries, ",")})
	}
	if q := queueName(job, w); q != "" {
		pod.Labels[vmafxv1.LabelKueueQueueName] = q
	}
	if spec.Volume != nil {
		workerpod.AddDataVolume(pod, spec.Volume)
	}
	if spec.OutputVolume != nil {
		workerpod.AddOutputVolume(pod, *spec.OutputVolume)
	}
	if spec.Credentials != nil {
		workerpod.AddCredentials(pod, *spec.Credentials)
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

// workerRequest is what job's worker Pod does: the one place the operator turns a job's
// spec into a worker request (a chunked job's steps add theirs, chunk.go). It never
// carries credentials: those reach the worker as the files of spec.credentials' Secret.
func workerRequest(job *vmafxv1.VmafxJob) *vmafxv1.WorkerRequest {
	s := job.Spec
	r := &vmafxv1.ScoreRequest{Reference: string(s.Reference), Distorted: string(s.Distorted),
		PixelFormat: string(s.PixelFormat), Model: string(s.Model), Deinterlace: s.Deinterlace}
	if s.Width != nil && s.Height != nil {
		r.Width, r.Height = int(*s.Width), int(*s.Height)
	}
	if s.Output != nil {
		r.Output, r.OutputFormat = string(*s.Output), string(s.OutputFormat)
	}
	for _, f := range s.Features {
		r.Features = append(r.Features, string(f))
	}
	if e := s.Encode; e != nil {
		r.Encode = &vmafxv1.RequestEncode{}
		if e.Width != nil && e.Height != nil {
			r.Encode.Width, r.Encode.Height = int(*e.Width), int(*e.Height)
		}
		if e.BitDepth != nil {
			r.Encode.BitDepth = int(*e.BitDepth)
		}
	}
	if s.ScoringBitDepth != nil {
		r.ScoringBitDepth = int(*s.ScoringBitDepth)
	}
	if a := s.Alignment; a != nil {
		r.Alignment, r.Frames = requestAlignment(a)
	}
	requestWorst(s, r)
	if hasRenditions(job) {
		requestRenditions(job, r)
	}
	req := vmafxv1.NewWorkerRequest()
	req.Score, req.Store = r, workerpod.Store(s.Credentials, s.S3)
	return req
}
