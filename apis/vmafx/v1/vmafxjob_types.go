package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// VideoURI locates a video for the worker: file:///abs/path (inside the worker container,
// usually under /data where spec.volume is mounted), http(s)://host/path or
// s3://bucket/key.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=2048
// +kubebuilder:validation:XValidation:rule="self.matches('^[a-zA-Z][a-zA-Z0-9+.-]*://')",message="must be a URI of the form scheme://path"
// +kubebuilder:validation:XValidation:rule="!self.matches('^[a-zA-Z][a-zA-Z0-9+.-]*://') || self.matches('^(file|http|https|s3)://')",message="unsupported scheme: the worker reads file://, http://, https:// and s3:// URIs"
// +kubebuilder:validation:XValidation:rule="!self.startsWith('file://') || self.matches('^file:///[^/].*')",message="file:// URIs need an absolute path inside the worker container, e.g. file:///data/ref.y4m"
// +kubebuilder:validation:XValidation:rule="!self.matches('^(http|https|s3)://') || self.matches('^(http|https|s3)://[^/]+/.+')",message="http(s):// and s3:// URIs need a host (or bucket) and a non-empty path"
type VideoURI string

// PixelFormat is the layout of raw YUV frames.
// +kubebuilder:validation:Enum=yuv420p;yuv422p;yuv444p;yuv420p10le;yuv422p10le;yuv444p10le;yuv420p12le;yuv422p12le;yuv444p12le
type PixelFormat string

// VmafxJobSpec is what to score and how. It cannot be changed once the job exists: delete
// the job and create a new one instead.
//
// +kubebuilder:validation:XValidation:rule="has(self.width) || (self.reference.endsWith('.y4m') && self.distorted.endsWith('.y4m'))",message="width is required unless both inputs are .y4m files, which carry their own geometry",fieldPath=".width"
// +kubebuilder:validation:XValidation:rule="has(self.height) || (self.reference.endsWith('.y4m') && self.distorted.endsWith('.y4m'))",message="height is required unless both inputs are .y4m files, which carry their own geometry",fieldPath=".height"
// +kubebuilder:validation:XValidation:rule="!has(self.width) || !(self.pixelFormat.startsWith('yuv420') || self.pixelFormat.startsWith('yuv422')) || self.width % 2 == 0",message="width must be even for 4:2:0 and 4:2:2 pixel formats",fieldPath=".width"
// +kubebuilder:validation:XValidation:rule="!has(self.height) || !self.pixelFormat.startsWith('yuv420') || self.height % 2 == 0",message="height must be even for 4:2:0 pixel formats",fieldPath=".height"
type VmafxJobSpec struct {
	// reference is the URI of the pristine video.
	// +required
	Reference VideoURI `json:"reference"`

	// distorted is the URI of the video to score against the reference.
	// +required
	Distorted VideoURI `json:"distorted"`

	// model is the VMAF model: vmaf_v0.6.1, vmaf_v0.6.1neg or vmaf_v0.6.1phone.
	// +kubebuilder:default=vmaf_v0.6.1
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`
	// +optional
	Model string `json:"model,omitempty"`

	// backend is the compute backend to score on: cuda (NVIDIA), hip (AMD), sycl (Intel),
	// vulkan (any GPU), cpu, or auto (any GPU by the scheduler's vendor preference, else cpu).
	// +kubebuilder:default=auto
	// +optional
	Backend Backend `json:"backend,omitempty"`

	// priority, from 0 to 1000, is copied to the worker Pod's vmafx.dev/priority
	// annotation for dashboards and policies. It does not yet reorder the scheduler's queue.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +kubebuilder:default=0
	// +optional
	Priority int32 `json:"priority,omitempty"`

	// width of raw YUV frames in pixels (16 to 16384). Required unless both inputs are .y4m.
	// +kubebuilder:validation:Minimum=16
	// +kubebuilder:validation:Maximum=16384
	// +optional
	Width *int32 `json:"width,omitempty"`

	// height of raw YUV frames in pixels (16 to 16384). Required unless both inputs are .y4m.
	// +kubebuilder:validation:Minimum=16
	// +kubebuilder:validation:Maximum=16384
	// +optional
	Height *int32 `json:"height,omitempty"`

	// pixelFormat of raw YUV frames. Ignored for .y4m inputs, whose header says it.
	// +kubebuilder:default=yuv420p
	// +optional
	PixelFormat PixelFormat `json:"pixelFormat,omitempty"`

	// output, when set, is where the worker writes the per-frame scores as libvmaf JSON
	// (file:// inside the worker, or s3://).
	// +optional
	Output *VideoURI `json:"output,omitempty"`

	// volume, when set, is mounted read-only into the worker at /data, so that
	// file:///data/... URIs resolve. Set exactly one of its fields. persistentVolumeClaim
	// and csi are always allowed (and attached read-only); hostPath and nfs only where the
	// operator's configuration allows that path or server (see docs/operator.md).
	// +optional
	Volume *JobVolume `json:"volume,omitempty"`

	// backoffLimit is how many failed attempts are retried before the job fails (0 to 10).
	// A lost Pod (deleted, evicted, preempted, refused by the kubelet, or gone with its
	// node) does not count; a deterministic failure (BadInput, BadModel, UnparsableResult)
	// fails the job at once.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	// +kubebuilder:default=2
	// +optional
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`

	// activeDeadlineSeconds bounds each attempt's run time, in seconds.
	// +kubebuilder:validation:Minimum=1
	// +optional
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`

	// pendingDeadlineSeconds bounds, in seconds, how long an attempt may wait for its worker
	// Pod to be created and placed on a node (a ResourceQuota that is used up, no node that
	// fits the backend, no fresh heartbeat). When it passes, the job fails with the reason
	// it was waiting for. Unset: the operator's default (VMAFX_OPERATOR_PENDING_DEADLINE,
	// none unless the operator sets one); 0: wait for ever.
	// +kubebuilder:validation:Minimum=0
	// +optional
	PendingDeadlineSeconds *int64 `json:"pendingDeadlineSeconds,omitempty"`

	// ttlSecondsAfterFinished is how long, in seconds, a job is kept once it Succeeded or
	// Failed; then the operator deletes it and its worker Pods. Unset: the operator's
	// default (VMAFX_OPERATOR_TTL_AFTER_FINISHED, 7 days unless the operator sets another);
	// 0: delete as soon as it finishes.
	// +kubebuilder:validation:Minimum=0
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// JobVolume is the storage holding a job's videos. It is a subset of the Kubernetes
// VolumeSource: the kinds that hold existing files. Set exactly one field.
//
// +kubebuilder:validation:XValidation:rule="[has(self.persistentVolumeClaim), has(self.hostPath), has(self.nfs), has(self.csi)].filter(x, x).size() == 1",message="set exactly one of persistentVolumeClaim, hostPath, nfs, csi"
type JobVolume struct {
	// persistentVolumeClaim mounts a PVC in the job's namespace.
	// +optional
	PersistentVolumeClaim *corev1.PersistentVolumeClaimVolumeSource `json:"persistentVolumeClaim,omitempty"`
	// hostPath mounts a directory of the node the worker runs on.
	// +optional
	HostPath *corev1.HostPathVolumeSource `json:"hostPath,omitempty"`
	// nfs mounts an NFS export.
	// +optional
	NFS *corev1.NFSVolumeSource `json:"nfs,omitempty"`
	// csi mounts an inline CSI volume.
	// +optional
	CSI *corev1.CSIVolumeSource `json:"csi,omitempty"`
}

// VolumeSource returns the Kubernetes volume source for v.
func (v *JobVolume) VolumeSource() corev1.VolumeSource {
	return corev1.VolumeSource{
		PersistentVolumeClaim: v.PersistentVolumeClaim,
		HostPath:              v.HostPath,
		NFS:                   v.NFS,
		CSI:                   v.CSI,
	}
}

// JobPhase is where a job is in its life.
// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed
type JobPhase string

// The phases of a VmafxJob.
const (
	JobPending   JobPhase = "Pending"
	JobRunning   JobPhase = "Running"
	JobSucceeded JobPhase = "Succeeded"
	JobFailed    JobPhase = "Failed"
)

// Condition types of a VmafxJob.
const (
	// JobScheduled is True once the current attempt's Pod is bound to a node; while it is
	// False its reason and message are the scheduler's.
	JobScheduled = "Scheduled"
	// JobRunningCondition is True while the current attempt's worker runs.
	JobRunningCondition = "Running"
	// JobComplete is True once the job has a score.
	JobComplete = "Complete"
	// JobFailedCondition is True once the job has failed for good.
	JobFailedCondition = "Failed"
	// JobPodRefused is True while the API server refuses to create the current attempt's
	// Pod; its reason and message are the API server's (e.g. a used-up ResourceQuota).
	JobPodRefused = "PodRefused"
)

// JobResult is the pooled outcome of a successful job. Scores are decimal strings with
// six decimals, as libvmaf prints them.
type JobResult struct {
	// mean is the pooled (arithmetic mean) VMAF score.
	Mean string `json:"mean"`
	// harmonicMean is the harmonic mean of the per-frame scores.
	// +optional
	HarmonicMean string `json:"harmonicMean,omitempty"`
	// min is the lowest per-frame score.
	// +optional
	Min string `json:"min,omitempty"`
	// max is the highest per-frame score.
	// +optional
	Max string `json:"max,omitempty"`
	// frames is the number of frames scored.
	// +optional
	Frames int32 `json:"frames,omitempty"`
	// fps is the scoring speed in frames per second.
	// +optional
	FPS string `json:"fps,omitempty"`
	// backend is the backend that actually ran (it may differ from the one asked for).
	// +optional
	Backend string `json:"backend,omitempty"`
	// model is the model that scored, with its checksum.
	// +optional
	Model string `json:"model,omitempty"`
}

// VmafxJobStatus is what the operator has observed of a job.
type VmafxJobStatus struct {
	// observedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// phase is Pending, Running, Succeeded or Failed.
	// +optional
	Phase JobPhase `json:"phase,omitempty"`
	// score is the pooled VMAF score (result.mean), set once the job succeeded.
	// +optional
	Score string `json:"score,omitempty"`
	// result holds the pooled scores and provenance of a successful job.
	// +optional
	Result *JobResult `json:"result,omitempty"`
	// node is the node of the current or last attempt.
	// +optional
	Node string `json:"node,omitempty"`
	// podName is the worker Pod of the current or last attempt.
	// +optional
	PodName string `json:"podName,omitempty"`
	// attempts is the number of worker Pods created for this job so far.
	// +optional
	Attempts int32 `json:"attempts,omitempty"`
	// failedAttempts is the number of attempts that failed (lost Pods excluded).
	// +optional
	FailedAttempts int32 `json:"failedAttempts,omitempty"`
	// lostAttempts is the number of attempts whose Pod was lost: deleted, evicted,
	// preempted, refused by the kubelet, or gone with its node. They are retried at once
	// and do not count against spec.backoffLimit.
	// +optional
	LostAttempts int32 `json:"lostAttempts,omitempty"`
	// startTime is when the first worker started running.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// completionTime is when the job succeeded or failed for good.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// message says, for people, why the job is in its phase.
	// +optional
	Message string `json:"message,omitempty"`
	// conditions: Scheduled, Running, Complete, Failed, PodRefused.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// VmafxJob scores one distorted video against its reference with VMAF, in a worker Pod
// placed by vmafx-scheduler on a node with a free scoring slot.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=vmjob,categories=vmafx
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Score",type=string,JSONPath=`.status.score`
// +kubebuilder:printcolumn:name="Node",type=string,JSONPath=`.status.node`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type VmafxJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is what to score. It is immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable: delete the job and create a new one to score something else"
	// +required
	Spec VmafxJobSpec `json:"spec"`

	// status is what the operator observed.
	// +optional
	Status VmafxJobStatus `json:"status,omitempty"`
}

// VmafxJobList is a list of VmafxJobs.
//
// +kubebuilder:object:root=true
type VmafxJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VmafxJob `json:"items"`
}

func init() {
	SchemeBuilder.Register(&VmafxJob{}, &VmafxJobList{})
}
