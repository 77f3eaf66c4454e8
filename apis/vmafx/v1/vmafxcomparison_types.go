package v1

import (
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ComparisonInput is one distorted video of a VmafxComparison.
type ComparisonInput struct {
	// name labels the video in the status table; it also names its VmafxJob
	// (<comparison>-<name>) and its per-frame output (<output>/<name>.json). Lower-case
	// letters, digits and '-', at most 40 characters. Name all inputs or none; unnamed
	// inputs are called d1, d2, ... by position.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Name string `json:"name,omitempty"`

	// uri of the distorted video.
	// +required
	URI VideoURI `json:"uri"`
}

// VmafxComparisonSpec is one reference and the distorted videos to score against it.
// It cannot be changed once the comparison exists.
//
// +kubebuilder:validation:XValidation:rule="self.distorted.all(d, has(d.name)) || self.distorted.all(d, !has(d.name))",message="name every distorted input or none",fieldPath=".distorted"
// +kubebuilder:validation:XValidation:rule="!has(self.distorted[0].name) || self.distorted.all(d, self.distorted.exists_one(e, e.name == d.name))",message="distorted input names must be unique",fieldPath=".distorted"
// +kubebuilder:validation:XValidation:rule="has(self.width) == has(self.height)",message="set width and height together",fieldPath=".width"
// +kubebuilder:validation:XValidation:rule="!has(self.output) || !self.output.startsWith('file://') || has(self.outputVolume)",message="a file:// output needs spec.outputVolume, the writable volume mounted at /output",fieldPath=".output"
// +kubebuilder:validation:XValidation:rule="!has(self.outputFormat) || has(self.output)",message="outputFormat needs an output",fieldPath=".outputFormat"
// +kubebuilder:validation:XValidation:rule="!has(self.worstFrames) || !has(self.worstFrames.pictures) || !self.worstFrames.pictures || has(self.output)",message="worstFrames.pictures needs spec.output: each job's pictures are written beside its output",fieldPath=".worstFrames.pictures"
// +kubebuilder:validation:XValidation:rule="!has(self.sharedReference) || !has(self.alignment) || !has(self.alignment.auto) || !self.alignment.auto",message="sharedReference does not go with alignment.auto: each distorted video would search its own offset; give alignment.referenceStart and distortedStart, or leave sharedReference out",fieldPath=".sharedReference"
type VmafxComparisonSpec struct {
	// reference is the URI of the pristine video.
	// +required
	Reference VideoURI `json:"reference"`

	// distorted are the videos to score against the reference, 1 to 100. Each is scored
	// by its own VmafxJob, so they run in parallel across the cluster's slots.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	// +required
	Distorted []ComparisonInput `json:"distorted"`

	// output, when set, is the prefix under which each distorted video's per-frame
	// scores are written, as <output>/<name>.json (or .csv): s3://bucket/prefix,
	// gs://..., azure://..., or file:///output/... on spec.outputVolume.
	// +optional
	Output *OutputURI `json:"output,omitempty"`

	// alignment pairs the frames of every distorted video with the reference's, as a
	// VmafxJob's spec.alignment does; auto: true finds each one's offset on its own (a
	// capture with leader frames beside encodes without), and the table shows it.
	// +optional
	Alignment *Alignment `json:"alignment,omitempty"`

	// sharedReference, when set, scores the distorted videos in groups, in spec order,
	// up to maxRenditionsPerPod to a group: one VmafxJob (and worker Pod) per group
	// decodes the reference once for all of its videos (spec.renditions). Each score
	// equals the one its own job would give. Unset: one job per distorted video.
	// +optional
	SharedReference *SharedReference `json:"sharedReference,omitempty"`

	ScoringSettings `json:",inline"`
}

// SharedReference groups a comparison's distorted videos into jobs that decode the
// reference once for several of them.
type SharedReference struct {
	// maxRenditionsPerPod is the most distorted videos one job scores against one decode
	// of the reference (2 to 8, default 4). A group's videos share one slot's CPUs and
	// each needs its own memory (about 140 MiB of kernel at one thread and 170 MiB of
	// decoder at 1080p): more saves more decoding and runs longer in one Pod.
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=8
	// +kubebuilder:default=4
	// +optional
	MaxRenditionsPerPod int32 `json:"maxRenditionsPerPod,omitempty"`
}

// DefaultMaxRenditionsPerPod is spec.sharedReference.maxRenditionsPerPod's default, for a
// comparison the API server has not defaulted.
const DefaultMaxRenditionsPerPod = 4

// ComparisonEntry is one row of a comparison's table: one distorted video.
type ComparisonEntry struct {
	// name of the distorted input.
	Name string `json:"name"`
	// job is the VmafxJob that scores it.
	Job string `json:"job"`
	// phase of that job.
	// +optional
	Phase JobPhase `json:"phase,omitempty"`
	// score is the pooled (mean) VMAF score.
	// +optional
	Score string `json:"score,omitempty"`
	// harmonicMean of the per-frame scores.
	// +optional
	HarmonicMean string `json:"harmonicMean,omitempty"`
	// min is the lowest per-frame score.
	// +optional
	Min string `json:"min,omitempty"`
	// frames scored.
	// +optional
	Frames int32 `json:"frames,omitempty"`
	// p5 is the 5th percentile of the per-frame scores.
	// +optional
	P5 string `json:"p5,omitempty"`
	// worstFrame is the lowest-scoring frame: its index and score.
	// +optional
	WorstFrame *JobFrame `json:"worstFrame,omitempty"`
	// offset is the frame offset the job's alignment search found (status.result.
	// alignment.offset): scored with alignment.auto, or likely missed (misaligned).
	// +optional
	Offset *int32 `json:"offset,omitempty"`
	// misaligned is set when the job's score is likely of misaligned frames (its
	// Aligned condition is False); the score is kept.
	// +optional
	Misaligned bool `json:"misaligned,omitempty"`
	// message says why the job failed.
	// +optional
	Message string `json:"message,omitempty"`
}

// Condition types of a VmafxComparison and a VmafxLadder.
const (
	// ComparisonComplete is True once every VmafxJob of the comparison has finished.
	ComparisonComplete = "Complete"
	// ComparisonFailed is True once a VmafxJob of the comparison has failed for good.
	ComparisonFailed = "Failed"
)

// VmafxComparisonStatus is what the operator has observed of a comparison.
type VmafxComparisonStatus struct {
	// observedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// phase is Pending (no job runs yet), Running, Succeeded (every distorted video has a
	// score) or Failed (every job finished and at least one failed).
	// +optional
	Phase JobPhase `json:"phase,omitempty"`
	// total is the number of distorted videos.
	// +optional
	Total int32 `json:"total,omitempty"`
	// succeeded is the number of distorted videos with a score.
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`
	// failed is the number of distorted videos whose job failed.
	// +optional
	Failed int32 `json:"failed,omitempty"`
	// best names the distorted video with the highest score so far.
	// +optional
	Best string `json:"best,omitempty"`
	// results is the table: one entry per distorted video, in spec order.
	// +listType=atomic
	// +optional
	Results []ComparisonEntry `json:"results,omitempty"`
	// conditions: Complete, Failed.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// VmafxComparison scores many distorted videos against one reference: one VmafxJob per
// distorted video, and their scores gathered into one table.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=vmcmp,categories=vmafx
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Succeeded",type=integer,JSONPath=`.status.succeeded`
// +kubebuilder:printcolumn:name="Total",type=integer,JSONPath=`.status.total`
// +kubebuilder:printcolumn:name="Best",type=string,JSONPath=`.status.best`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 200",message="metadata.name must be at most 200 characters: it prefixes the names of the comparison's VmafxJobs"
type VmafxComparison struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is what to compare. It is immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable: delete the comparison and create a new one"
	// +required
	Spec VmafxComparisonSpec `json:"spec"`

	// status is what the operator observed.
	// +optional
	Status VmafxComparisonStatus `json:"status,omitempty"`
}

// VmafxComparisonList is a list of VmafxComparisons.
//
// +kubebuilder:object:root=true
type VmafxComparisonList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VmafxComparison `json:"items"`
}

func init() {
	SchemeBuilder.Register(&VmafxComparison{}, &VmafxComparisonList{})
}

// InputName is the name of the i-th (from 0) distorted input: its own, or d<i+1>.
func (s *VmafxComparisonSpec) InputName(i int) string {
	if n := s.Distorted[i].Name; n != "" {
		return n
	}
	return "d" + strconv.Itoa(i+1)
}
