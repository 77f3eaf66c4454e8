package v1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// VideoURI locates a video for the worker: file:///abs/path (inside the worker container,
// usually under /data where spec.volume is mounted), http(s)://host/path, s3://bucket/key,
// gs://bucket/object or azure://container/blob. Credentials never go into the URI: name a
// Secret in spec.credentials instead.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=2048
// +kubebuilder:validation:XValidation:rule="self.matches('^[a-zA-Z][a-zA-Z0-9+.-]*://')",message="must be a URI of the form scheme://path"
// +kubebuilder:validation:XValidation:rule="!self.matches('^[a-zA-Z][a-zA-Z0-9+.-]*://') || self.matches('^(file|http|https|s3|gs|azure)://')",message="unsupported scheme: the worker reads file://, http://, https://, s3://, gs:// and azure:// URIs"
// +kubebuilder:validation:XValidation:rule="!self.startsWith('file://') || self.matches('^file:///[^/].*')",message="file:// URIs need an absolute path inside the worker container, e.g. file:///data/ref.y4m"
// +kubebuilder:validation:XValidation:rule="!self.matches('^(http|https|s3|gs|azure)://') || self.matches('^(http|https|s3|gs|azure)://[^/]+/.+')",message="http(s)://, s3://, gs:// and azure:// URIs need a host (or bucket) and a non-empty path"
// +kubebuilder:validation:XValidation:rule="!self.matches('^[a-zA-Z][a-zA-Z0-9+.-]*://[^/?#]*@')",message="credentials must not be part of the URI: put them in a Secret and name it in spec.credentials.secretRef"
// +kubebuilder:validation:XValidation:rule="!self.matches('(?i)[?&](x-amz-signature|x-amz-credential|x-goog-signature|x-goog-credential|sig|signature|awsaccesskeyid)=')",message="signed URLs carry credentials: use s3://, gs:// or azure:// with a Secret named in spec.credentials.secretRef"
type VideoURI string

// OutputURI is where the worker writes per-frame scores: s3://bucket/key, gs://bucket/object,
// azure://container/blob, or file:///output/... on the writable spec.outputVolume.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=2048
// +kubebuilder:validation:XValidation:rule="self.matches('^(file|s3|gs|azure)://')",message="the worker writes outputs to s3://, gs://, azure:// or file:///output/... (a writable spec.outputVolume); http(s) and other schemes cannot be written"
// +kubebuilder:validation:XValidation:rule="!self.startsWith('file://') || self.matches('^file:///output/[^/].*')",message="file:// outputs must be under /output, where spec.outputVolume is mounted writable (the input volume at /data is read-only)"
// +kubebuilder:validation:XValidation:rule="!self.matches('^(s3|gs|azure)://') || self.matches('^(s3|gs|azure)://[^/@?#]+/.+')",message="s3://, gs:// and azure:// outputs need a bucket (or container) and a key, and no credentials"
type OutputURI string

// Feature is a metric computed beside VMAF in the same pass.
// +kubebuilder:validation:Enum=psnr;ssim;ms_ssim;cambi
type Feature string

// The features a job can ask for, with the names libvmaf reports them under.
const (
	FeaturePSNR   Feature = "psnr"    // psnr_y, psnr_cb, psnr_cr
	FeatureSSIM   Feature = "ssim"    // float_ssim
	FeatureMSSSIM Feature = "ms_ssim" // float_ms_ssim
	FeatureCAMBI  Feature = "cambi"   // cambi
)

// OutputFormat is the layout of the per-frame output.
// +kubebuilder:validation:Enum=json;csv
type OutputFormat string

// The output formats.
const (
	OutputJSON OutputFormat = "json"
	OutputCSV  OutputFormat = "csv"
)

// Credentials names where the worker finds the keys of a job's object store.
type Credentials struct {
	// secretRef names a Secret in the job's namespace. It is mounted read-only into the
	// worker, one file per key; the operator never reads it. Keys: AWS_ACCESS_KEY_ID,
	// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION, AWS_ENDPOINT_URL,
	// AWS_S3_USE_PATH_STYLE (s3://); AZURE_STORAGE_ACCOUNT, AZURE_STORAGE_KEY,
	// AZURE_STORAGE_SAS_TOKEN (azure://); GOOGLE_APPLICATION_CREDENTIALS_JSON, a service
	// account key (gs://). Keys that do not apply are ignored.
	// +required
	SecretRef SecretReference `json:"secretRef"`
}

// SecretReference names a Secret in the object's namespace.
type SecretReference struct {
	// name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +required
	Name string `json:"name"`
}

// S3Options reach S3-compatible servers other than AWS. They override the Secret's
// AWS_ENDPOINT_URL, AWS_REGION and AWS_S3_USE_PATH_STYLE.
type S3Options struct {
	// endpoint is the server's base URL, e.g. http://versitygw.storage.svc:7070.
	// Empty means AWS.
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('^https?://[^/@?#]+/?$')",message="endpoint must be http(s)://host[:port], without a path or credentials"
	// +optional
	Endpoint string `json:"endpoint,omitempty"`
	// region of the bucket, e.g. us-east-1.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[a-z0-9-]*$`
	// +optional
	Region string `json:"region,omitempty"`
	// pathStyle addresses buckets as endpoint/bucket/key instead of bucket.endpoint/key,
	// which most S3-compatible servers need.
	// +optional
	PathStyle bool `json:"pathStyle,omitempty"`
}

// Alignment pairs the frames of two inputs that do not start together or do not have the
// same length or frame rate. Frames are paired by index after the starts are skipped:
// the starts given, or with auto those the worker finds (see docs/worker.md, "Alignment").
//
// +kubebuilder:validation:XValidation:rule="!has(self.auto) || !self.auto || ((!has(self.referenceStart) || self.referenceStart == 0) && (!has(self.distortedStart) || self.distortedStart == 0))",message="alignment.auto finds the starts itself: give either auto or referenceStart and distortedStart"
// +kubebuilder:validation:XValidation:rule="!has(self.window) || (has(self.auto) && self.auto)",message="alignment.window is the offsets alignment.auto searches: it needs auto: true"
type Alignment struct {
	// referenceStart is the number of reference frames to skip.
	// +kubebuilder:validation:Minimum=0
	// +optional
	ReferenceStart int32 `json:"referenceStart,omitempty"`
	// distortedStart is the number of distorted frames to skip.
	// +kubebuilder:validation:Minimum=0
	// +optional
	DistortedStart int32 `json:"distortedStart,omitempty"`
	// frames is the number of frame pairs to score; 0 (the default) scores until the
	// shorter input ends.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Frames int32 `json:"frames,omitempty"`
	// auto has the worker find the offset between the inputs (leader frames, dropped
	// or added frames at the start) by comparing small luma pictures of their first
	// frames at every offset of the window, and score the frames that match. The offset,
	// its confidence and the measure are in status.result.alignment. A chunked job
	// (spec.parallelism) searches in its probe, and every chunk skips the starts found.
	// Inputs whose frame rates differ by 1000/1001 (24 and 23.976) pair by index; by a
	// whole factor (25 and 50), every n-th frame of the faster one is kept, from the phase
	// that matches (not in a chunked job); other differences fail with a reason.
	// +optional
	Auto bool `json:"auto,omitempty"`
	// window is how many frames either side of zero auto searches (1 to 300; 30 when
	// unset). Each input's first window+60 frames are compared.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=300
	// +optional
	Window int32 `json:"window,omitempty"`
}

// OutputVolume is the writable storage for a file:// output, mounted at /output.
type OutputVolume struct {
	// persistentVolumeClaim mounts a PVC of the job's namespace, writable.
	// +required
	PersistentVolumeClaim corev1.PersistentVolumeClaimVolumeSource `json:"persistentVolumeClaim"`
}

// PixelFormat is the layout of raw YUV frames.
// +kubebuilder:validation:Enum=yuv420p;yuv422p;yuv444p;yuv420p10le;yuv422p10le;yuv444p10le;yuv420p12le;yuv422p12le;yuv444p12le
type PixelFormat string

// VmafxJobSpec is what to score and how. It cannot be changed once the job exists: delete
// the job and create a new one instead.
//
// +kubebuilder:validation:XValidation:rule="has(self.width) || !(self.reference.matches('(?i)[.](yuv|raw)$') || self.distorted.matches('(?i)[.](yuv|raw)$'))",message="width is required for raw YUV inputs (.yuv, .raw), which do not carry their geometry; Y4M and encoded videos (mp4, mkv, webm, mov, ts) do",fieldPath=".width"
// +kubebuilder:validation:XValidation:rule="has(self.height) || !(self.reference.matches('(?i)[.](yuv|raw)$') || self.distorted.matches('(?i)[.](yuv|raw)$'))",message="height is required for raw YUV inputs (.yuv, .raw), which do not carry their geometry; Y4M and encoded videos (mp4, mkv, webm, mov, ts) do",fieldPath=".height"
// +kubebuilder:validation:XValidation:rule="has(self.width) == has(self.height)",message="set width and height together",fieldPath=".width"
// +kubebuilder:validation:XValidation:rule="!has(self.output) || !self.output.startsWith('file://') || has(self.outputVolume)",message="a file:// output needs spec.outputVolume, the writable volume mounted at /output",fieldPath=".output"
// +kubebuilder:validation:XValidation:rule="!has(self.outputFormat) || has(self.output)",message="outputFormat needs an output",fieldPath=".outputFormat"
// +kubebuilder:validation:XValidation:rule="!has(self.subjectiveScore) || (has(self.output) && (!has(self.outputFormat) || self.outputFormat == 'json'))",message="subjectiveScore needs a JSON spec.output: its per-frame features are what a training run learns from",fieldPath=".subjectiveScore"
// +kubebuilder:validation:XValidation:rule="!has(self.width) || !(self.pixelFormat.startsWith('yuv420') || self.pixelFormat.startsWith('yuv422')) || self.width % 2 == 0",message="width must be even for 4:2:0 and 4:2:2 pixel formats",fieldPath=".width"
// +kubebuilder:validation:XValidation:rule="!has(self.height) || !self.pixelFormat.startsWith('yuv420') || self.height % 2 == 0",message="height must be even for 4:2:0 pixel formats",fieldPath=".height"
// +kubebuilder:validation:XValidation:rule="!has(self.parallelism) || self.parallelism == 1 || has(self.output)",message="parallelism above 1 needs spec.output: each chunk writes its per-frame scores beside it, and a last worker Pod merges them into it",fieldPath=".parallelism"
// +kubebuilder:validation:XValidation:rule="!has(self.worstFrames) || !has(self.worstFrames.pictures) || !self.worstFrames.pictures || has(self.output)",message="worstFrames.pictures needs spec.output: the pictures are written beside it",fieldPath=".worstFrames.pictures"
// +kubebuilder:validation:XValidation:rule="!has(self.worstFrames) || !has(self.worstFrames.pictures) || !self.worstFrames.pictures || !has(self.parallelism) || self.parallelism == 1",message="worstFrames.pictures needs parallelism 1: the pictures are drawn by the Pod that decodes the whole video",fieldPath=".worstFrames.pictures"
// +kubebuilder:validation:XValidation:rule="!has(self.renditions) || size(self.renditions) == 0 || !has(self.parallelism) || self.parallelism == 1",message="renditions need parallelism 1: one worker Pod decodes the reference once for every rendition, while a job split into chunks scores one distorted video",fieldPath=".renditions"
// +kubebuilder:validation:XValidation:rule="!has(self.renditions) || size(self.renditions) == 0 || !has(self.alignment) || !has(self.alignment.auto) || !self.alignment.auto",message="renditions do not go with alignment.auto: each rendition would search its own offset; give alignment.referenceStart and distortedStart, or score the renditions in jobs of their own",fieldPath=".renditions"
// +kubebuilder:validation:XValidation:rule="!has(self.renditions) || self.renditions.all(r, !has(r.output) || !r.output.startsWith('file://') || has(self.outputVolume))",message="a rendition's file:// output needs spec.outputVolume, the writable volume mounted at /output",fieldPath=".renditions"
type VmafxJobSpec struct {
	// reference is the URI of the pristine video.
	// +required
	Reference VideoURI `json:"reference"`

	// distorted is the URI of the video to score against the reference.
	// +required
	Distorted VideoURI `json:"distorted"`

	// renditions are more distorted videos (up to 7) scored against the same reference
	// in the same worker Pod, which decodes the reference once for all of them; each is
	// scored exactly as a job of its own would score it, with the job's settings, and has
	// its own row in status.results. A rendition that cannot be scored (BadInput) fails
	// its row only. Not with parallelism above 1 nor alignment.auto.
	// +kubebuilder:validation:MaxItems=7
	// +listType=atomic
	// +optional
	Renditions []JobRendition `json:"renditions,omitempty"`

	// model is the VMAF model: a built-in model (vmaf_v0.6.1, vmaf_v0.6.1neg,
	// vmaf_4k_v0.6.1, vmaf_4k_v0.6.1neg, vmaf_b_v0.6.3 with a 95% confidence interval,
	// VMAF v1: vmaf_v1.0.16_3d0h, _5d0h, _1d5h_2160, _3d0h_2160 and their _hfr_ variants
	// for high frame rates, vmaf_v0.6.1phone, vmaf_v0.6.1negphone) or a trained model
	// version in an OCI registry,
	// oci://<registry>/<repository>:<tag> or oci://<registry>/<repository>@sha256:<digest>,
	// which the worker pulls (a VmafxModelTraining's status.lastCheckpoint.reference).
	// +kubebuilder:default=vmaf_v0.6.1
	// +optional
	Model ModelReference `json:"model,omitempty"`

	// subjectiveScore labels the pair for training: what viewers (or a trusted reference
	// metric) say about the distorted video, on VMAF's scale from 0 (bad) to 100 (excellent).
	// A 1-5 mean opinion score maps linearly: 20 x (MOS - 1) + 20 gives 1 -> 20, 5 -> 100.
	// A VmafxModelTraining learns from Succeeded jobs that carry one; the job needs a JSON
	// spec.output, whose per-frame features are the training sample. A decimal string or
	// number, e.g. "72.5".
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).compareTo(quantity('0')) >= 0 && quantity(string(self)).compareTo(quantity('100')) <= 0",message="subjectiveScore must be between 0 and 100 (VMAF's scale; a 1-5 MOS maps to 20 x (MOS - 1) + 20)"
	// +optional
	SubjectiveScore *resource.Quantity `json:"subjectiveScore,omitempty"`

	// backend is the compute backend to score on: cuda (NVIDIA), hip (AMD), sycl (Intel),
	// vulkan (any GPU), cpu, or auto (any GPU by the scheduler's vendor preference, else cpu).
	// +kubebuilder:default=auto
	// +optional
	Backend Backend `json:"backend,omitempty"`

	// priority, from 0 to 1000, orders the jobs waiting for a free slot: vmafx-scheduler
	// places the waiting worker Pod of the highest priority first, and among equal
	// priorities the one that has waited longest. It is copied to the worker Pod's
	// vmafx.dev/priority annotation. It never stops a running job; a Kubernetes
	// PriorityClass on the worker Pods, where the cluster sets one, ranks above it.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +kubebuilder:default=0
	// +optional
	Priority int32 `json:"priority,omitempty"`

	// width of raw YUV frames in pixels (16 to 16384). Required for raw .yuv inputs; Y4M and
	// encoded inputs carry their own.
	// +kubebuilder:validation:Minimum=16
	// +kubebuilder:validation:Maximum=16384
	// +optional
	Width *int32 `json:"width,omitempty"`

	// height of raw YUV frames in pixels (16 to 16384). Required for raw .yuv inputs; Y4M and
	// encoded inputs carry their own.
	// +kubebuilder:validation:Minimum=16
	// +kubebuilder:validation:Maximum=16384
	// +optional
	Height *int32 `json:"height,omitempty"`

	// pixelFormat of raw YUV frames. Ignored for Y4M and encoded inputs, which say it
	// themselves (a 10-bit encode is scored as 10-bit).
	// +kubebuilder:default=yuv420p
	// +optional
	PixelFormat PixelFormat `json:"pixelFormat,omitempty"`

	// output, when set, is where the worker writes the per-frame scores (libvmaf's JSON
	// layout, or CSV per outputFormat): s3://, gs://, azure://, or file:///output/... on
	// spec.outputVolume. If the output cannot be written the job still records its score,
	// with the OutputWritten condition False saying why.
	// +optional
	Output *OutputURI `json:"output,omitempty"`

	// outputFormat is json (libvmaf's per-frame JSON, the default) or csv.
	// +optional
	OutputFormat OutputFormat `json:"outputFormat,omitempty"`

	// outputVolume is the writable volume mounted at /output for file:// outputs.
	// +optional
	OutputVolume *OutputVolume `json:"outputVolume,omitempty"`

	// credentials names the Secret that holds the object store's keys for s3://, gs:// and
	// azure:// inputs and outputs. They reach only the worker, as read-only files; they
	// never appear in status, events, logs or the Pod's arguments.
	// +optional
	Credentials *Credentials `json:"credentials,omitempty"`

	// s3 reaches S3-compatible servers: endpoint, region, path-style addressing.
	// +optional
	S3 *S3Options `json:"s3,omitempty"`

	// features are metrics computed beside VMAF in the same pass: psnr (psnr_y, psnr_cb,
	// psnr_cr), ssim (float_ssim), ms_ssim (float_ms_ssim) and cambi (banding). Their pooled
	// means land in status.result.features, per-frame values in the output.
	// +listType=set
	// +kubebuilder:validation:MaxItems=4
	// +optional
	Features []Feature `json:"features,omitempty"`

	// deinterlace, for inputs whose frames are marked interlaced, deinterlaces them (ffmpeg
	// bwdif, one frame per frame) before scoring. Without it interlaced frames are scored
	// as stored, both fields woven, and the worker's log says so.
	// +optional
	Deinterlace bool `json:"deinterlace,omitempty"`

	// scoringBitDepth scores at this many bits per sample, 10 or 12: shallower inputs are
	// converted as ffmpeg's format filter converts them (format=yuv420p10le shifts each
	// sample left). libvmaf recommends scoring VMAF v1 at 10 bits even for 8-bit
	// encodes. Unset, the job scores at the inputs' own depth.
	// +kubebuilder:validation:Enum=10;12
	// +optional
	ScoringBitDepth *int32 `json:"scoringBitDepth,omitempty"`

	// encode describes how the distorted video was encoded, when it was scaled or
	// converted before scoring: CAMBI (VMAF v1's banding feature, and the cambi feature)
	// judges banding on the picture as encoded, at the encode's size and bit depth
	// (libvmaf's enc_width, enc_height and enc_bitdepth). Unset, CAMBI judges the input
	// as it is.
	// +optional
	Encode *EncodeParameters `json:"encode,omitempty"`

	// alignment pairs frames of inputs that start at different frames or differ in length
	// or frame rate. Without it such inputs fail the job with a reason naming both values.
	// +optional
	Alignment *Alignment `json:"alignment,omitempty"`

	// worstFrames sets how many of the worst frames the status lists (5 unless told) and
	// asks for their pictures beside spec.output.
	// +optional
	WorstFrames *WorstFrames `json:"worstFrames,omitempty"`

	// volume, when set, is mounted read-only into the worker at /data, so that
	// file:///data/... URIs resolve. Set exactly one of its fields. persistentVolumeClaim
	// is always allowed (and attached read-only); hostPath, nfs and csi only where the
	// operator's configuration allows that path, server or CSI driver (see docs/operator.md).
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

	// parallelism splits the job's frames into this many chunks of consecutive frames (1 to
	// 256; 1, the default, scores everything in one worker Pod). Each chunk is scored by its
	// own worker Pod, with its own slot, anywhere in the cluster; a failed chunk is retried
	// alone (spec.backoffLimit counts per chunk). A short probe Pod first counts the frames,
	// and a last Pod merges the chunks' per-frame scores, in order, into spec.output, which
	// parallelism above 1 needs. The merged per-frame scores and pooled values equal a
	// single Pod's to the last printed digit. With more chunks than frames, each frame is a
	// chunk.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=256
	// +kubebuilder:default=1
	// +optional
	Parallelism int32 `json:"parallelism,omitempty"`

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

// JobRendition is one more distorted video of a job (spec.renditions).
type JobRendition struct {
	// distorted is the URI of the distorted video.
	// +required
	Distorted VideoURI `json:"distorted"`
	// output is where its per-frame scores go, as spec.output for spec.distorted (in
	// spec.outputFormat).
	// +optional
	Output *OutputURI `json:"output,omitempty"`
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
	// csi mounts an inline CSI volume of a driver the operator allows.
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

// Finished reports whether the phase is final: Succeeded or Failed. Jobs, comparisons and
// ladders share these phases.
func (p JobPhase) Finished() bool { return p == JobSucceeded || p == JobFailed }

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
	// JobOutputWritten is True once spec.output holds the per-frame scores, False with the
	// reason when the worker scored but could not write them. Absent without spec.output.
	JobOutputWritten = "OutputWritten"
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
	// confidenceInterval is the score's 95% confidence interval, for a bootstrapped
	// model (vmaf_b_v0.6.3): how far the score could move had the model been trained on
	// other subjective data.
	// +optional
	ConfidenceInterval *ScoreInterval `json:"confidenceInterval,omitempty"`
	// features are the pooled (mean) values of spec.features, by libvmaf's names
	// (psnr_y, float_ssim, ...), as decimal strings with six decimals.
	// +optional
	Features map[string]string `json:"features,omitempty"`
	// distortedScaledFrom is the distorted video's own size (e.g. "1280x720") when it was
	// scaled to the reference's size (bicubic) before scoring; empty when it was not.
	// +optional
	DistortedScaledFrom string `json:"distortedScaledFrom,omitempty"`
	// alignment is what the worker found about the inputs' frame offset: the offset
	// scored with spec.alignment.auto, or one that fits the frames clearly better than
	// the pairing scored (then the Aligned condition is False and the score is kept).
	// +optional
	Alignment *JobAlignment `json:"alignment,omitempty"`
	// device is the accelerator that scored on a GPU backend: its name, compute API and
	// driver (e.g. "NVIDIA H100 80GB HBM3, Vulkan 1.3.280, NVIDIA 570.86"); empty on the
	// CPU. Features still computed on the CPU are named after "host:", and frames the CPU
	// scored alone (while the device opened, or beside it) are counted after "cpu frames:".
	// +optional
	Device string `json:"device,omitempty"`
	// The worst frames, percentiles, scenes and report: where the score is made.
	JobWorst `json:",inline"`
}

// JobRenditionResult is one distorted video's row of a job with spec.renditions. Scores
// are decimal strings with six decimals.
//
// A row lists the video's worst frames, percentiles, scenes and report as a job of this
// video alone lists them in status.result, its report beside its own output. All rows
// come in the worker's one termination message (4 KiB), so a group of many videos may
// list fewer worst frames each than spec.worstFrames.count (halved, in every row alike,
// until they fit: 8 videos keep 5 each unless their features and URIs are long); the
// report beside each output keeps them all. A row is bounded as status.result is (20
// worst frames), and status.results holds at most 8 rows.
type JobRenditionResult struct {
	// distorted is the distorted video's URI.
	Distorted string `json:"distorted"`
	// phase is Succeeded or Failed.
	Phase JobPhase `json:"phase"`
	// mean is the pooled (arithmetic mean) VMAF score.
	// +optional
	Mean string `json:"mean,omitempty"`
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
	// The video's worst frames, percentiles, scenes and report (see the type).
	JobWorst `json:",inline"`
	// features are the pooled (mean) values of spec.features, by libvmaf's names.
	// +optional
	Features map[string]string `json:"features,omitempty"`
	// distortedScaledFrom is the distorted video's own size when it was scaled to the
	// reference's size before scoring.
	// +optional
	DistortedScaledFrom string `json:"distortedScaledFrom,omitempty"`
	// alignment is what the worker found about the frame offset (see result.alignment).
	// +optional
	Alignment *JobAlignment `json:"alignment,omitempty"`
	// outputError says why its per-frame output was not written; the score is kept.
	// +optional
	OutputError string `json:"outputError,omitempty"`
	// reason is why it failed, a worker reason (BadInput, FetchFailed, ...).
	// +optional
	Reason string `json:"reason,omitempty"`
	// message says why it failed, for people.
	// +optional
	Message string `json:"message,omitempty"`
}

// EncodeParameters are the size and bit depth a distorted video was encoded at.
// +kubebuilder:validation:XValidation:rule="has(self.width) == has(self.height)",message="encode.width and encode.height go together"
// +kubebuilder:validation:XValidation:rule="has(self.width) || has(self.bitDepth)",message="encode needs a width and height, a bitDepth, or both"
type EncodeParameters struct {
	// width is the encode's width in pixels.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16384
	// +optional
	Width *int32 `json:"width,omitempty"`
	// height is the encode's height in pixels.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16384
	// +optional
	Height *int32 `json:"height,omitempty"`
	// bitDepth is the encode's bits per sample.
	// +kubebuilder:validation:Enum=8;10;12
	// +optional
	BitDepth *int32 `json:"bitDepth,omitempty"`
}

// ScoreInterval is a bootstrapped model's 95% confidence interval around a pooled score:
// the means of libvmaf's per-frame vmaf_ci_p95_lo and vmaf_ci_p95_hi, with the bagged
// score (the mean of the bootstrap models) and their standard deviation, as decimal
// strings with six decimals.
type ScoreInterval struct {
	// low is the interval's lower end.
	Low string `json:"low"`
	// high is the interval's upper end.
	High string `json:"high"`
	// bagging is the mean of the bootstrap models' scores.
	// +optional
	Bagging string `json:"bagging,omitempty"`
	// stddev is the bootstrap models' standard deviation.
	// +optional
	StdDev string `json:"stddev,omitempty"`
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
	// results are the rows of a job with spec.renditions, one per distorted video scored
	// so far, in spec order (spec.distorted first): its scores, or why it failed.
	// result and score above are spec.distorted's row's, when it succeeded.
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	// +optional
	Results []JobRenditionResult `json:"results,omitempty"`
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
	// chunks follows a job split by spec.parallelism: the probe, each chunk and the merge.
	// Absent for a job scored by one Pod.
	// +optional
	Chunks *JobChunks `json:"chunks,omitempty"`
	// conditions: Scheduled, Running, Complete, Failed, PodRefused, OutputWritten, Aligned.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ChunkState is where one step of a chunked job is, as one letter, so that the states of
// 256 chunks fit in one short string.
type ChunkState byte

// The states of a step of a chunked job (the probe, a chunk, the merge).
const (
	ChunkPending   ChunkState = 'P' // its worker Pod waits to be created, placed or started
	ChunkRunning   ChunkState = 'R' // its worker runs
	ChunkDone      ChunkState = 'D' // scored (or counted, or merged)
	ChunkFailed    ChunkState = 'F' // the last attempt failed; retried after a backoff
	ChunkLost      ChunkState = 'L' // the last attempt's Pod was lost; retried at once
	ChunkNotYetRun ChunkState = '-' // waits for the probe
)

// ChunkStep is the probe's or the merge's progress in a chunked job.
type ChunkStep struct {
	// state is one letter: P pending, R running, D done, F failed (retried after a
	// backoff), L lost (retried at once).
	// +kubebuilder:validation:MaxLength=1
	// +optional
	State string `json:"state,omitempty"`
	// attempts is the number of worker Pods created for this step.
	// +optional
	Attempts int32 `json:"attempts,omitempty"`
	// failed is the number of those attempts that failed (lost ones excluded).
	// +optional
	Failed int32 `json:"failed,omitempty"`
}

// JobChunks is the progress of a job split by spec.parallelism. It is compact, so that a
// job of 256 chunks keeps a small status: one letter and two numbers per chunk.
type JobChunks struct {
	// frames is the number of frame pairs to score, as the probe counted them.
	// +optional
	Frames int32 `json:"frames,omitempty"`
	// total is the number of chunks.
	// +optional
	Total int32 `json:"total,omitempty"`
	// done is the number of chunks scored.
	// +optional
	Done int32 `json:"done,omitempty"`
	// progress is done/total, e.g. "3/4", for kubectl get.
	// +optional
	Progress string `json:"progress,omitempty"`
	// states has one letter per chunk, in frame order: P pending, R running, D done,
	// F failed (retried after a backoff), L lost (retried at once).
	// +kubebuilder:validation:MaxLength=256
	// +optional
	States string `json:"states,omitempty"`
	// attempts has, per chunk, the number of worker Pods created for it.
	// +kubebuilder:validation:MaxItems=256
	// +optional
	Attempts []int32 `json:"attempts,omitempty"`
	// failed has, per chunk, the number of its attempts that failed (lost ones excluded),
	// which spec.backoffLimit bounds.
	// +kubebuilder:validation:MaxItems=256
	// +optional
	Failed []int32 `json:"failed,omitempty"`
	// probe is the step that counts the frames before the chunks are planned.
	// +optional
	Probe *ChunkStep `json:"probe,omitempty"`
	// merge is the step that assembles the chunks' per-frame scores into spec.output and
	// pools them.
	// +optional
	Merge *ChunkStep `json:"merge,omitempty"`
	// alignment is what the probe's frame offset search found, with spec.alignment.auto:
	// the starts every chunk and the merge are given.
	// +optional
	Alignment *JobAlignment `json:"alignment,omitempty"`
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
// +kubebuilder:printcolumn:name="Chunks",type=string,JSONPath=`.status.chunks.progress`,priority=1
// +kubebuilder:printcolumn:name="Offset",type=integer,JSONPath=`.status.result.alignment.offset`,priority=1
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
