package v1

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LadderEncoder is an ffmpeg video encoder that a ladder encodes with.
// +kubebuilder:validation:Enum=libx264;libx265;libsvtav1
type LadderEncoder string

// The encoders a ladder can use.
const (
	EncoderX264   LadderEncoder = "libx264"
	EncoderX265   LadderEncoder = "libx265"
	EncoderSVTAV1 LadderEncoder = "libsvtav1"
)

// Short is the encoder's name in rung names: x264, x265, svtav1.
func (e LadderEncoder) Short() string { return strings.TrimPrefix(string(e), "lib") }

// RateControl is how an encoder's quality setting is read.
// +kubebuilder:validation:Enum=crf;qp
type RateControl string

// The rate controls a ladder can use.
const (
	// RateCRF is constant rate factor (constant quality), the per-title method's usual axis.
	RateCRF RateControl = "crf"
	// RateQP is a constant quantiser.
	RateQP RateControl = "qp"
)

// LadderResolution is one output size of a ladder.
// +kubebuilder:validation:XValidation:rule="self.height % 2 == 0",message="height must be even (4:2:0 encodes)",fieldPath=".height"
// +kubebuilder:validation:XValidation:rule="!has(self.width) || self.width % 2 == 0",message="width must be even (4:2:0 encodes)",fieldPath=".width"
type LadderResolution struct {
	// height of the encode in pixels, even, 16 to 8640.
	// +kubebuilder:validation:Minimum=16
	// +kubebuilder:validation:Maximum=8640
	// +required
	Height int32 `json:"height"`
	// width of the encode in pixels, even, 16 to 16384. Unset: the reference's aspect
	// ratio kept, rounded to an even width.
	// +kubebuilder:validation:Minimum=16
	// +kubebuilder:validation:Maximum=16384
	// +optional
	Width *int32 `json:"width,omitempty"`
}

// LadderCodec is one encoder of a ladder and the quality settings it encodes at.
// +kubebuilder:validation:XValidation:rule="self.encoder == 'libsvtav1' ? self.values.all(v, v <= 63) : self.values.all(v, v <= 51)",message="values must be 0 to 51 for libx264 and libx265, 0 to 63 for libsvtav1",fieldPath=".values"
// +kubebuilder:validation:XValidation:rule="!has(self.preset) || (self.encoder == 'libsvtav1' ? self.preset.matches('^([0-9]|1[0-3])$') : self.preset in ['ultrafast', 'superfast', 'veryfast', 'faster', 'fast', 'medium', 'slow', 'slower', 'veryslow', 'placebo'])",message="preset must be one of ultrafast, superfast, veryfast, faster, fast, medium, slow, slower, veryslow, placebo for libx264 and libx265, or 0 to 13 for libsvtav1",fieldPath=".preset"
// +kubebuilder:validation:XValidation:rule="self.encoder != 'libsvtav1' || self.rateControl != 'qp'",message="libsvtav1 encodes with crf only in this version",fieldPath=".rateControl"
type LadderCodec struct {
	// encoder is the ffmpeg encoder: libx264 (H.264), libx265 (HEVC) or libsvtav1 (AV1).
	// +required
	Encoder LadderEncoder `json:"encoder"`
	// rateControl says what values are: crf (constant rate factor) or qp (constant
	// quantiser).
	// +kubebuilder:default=crf
	// +optional
	RateControl RateControl `json:"rateControl,omitempty"`
	// values are the crf or qp values to encode each resolution at, 1 to 10 of them:
	// 0 to 51 for libx264 and libx265, 0 to 63 for libsvtav1.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=10
	// +kubebuilder:validation:items:Minimum=0
	// +listType=set
	// +required
	Values []int32 `json:"values"`
	// preset is the encoder's speed preset: ultrafast ... veryslow for libx264 and
	// libx265, 0 (slowest) to 13 (fastest) for libsvtav1. Unset: the encoder's default.
	// +kubebuilder:validation:MaxLength=16
	// +optional
	Preset string `json:"preset,omitempty"`
}

// VmafxLadderSpec is the reference to encode and the grid to encode it at. It cannot be
// changed once the ladder exists.
//
// +kubebuilder:validation:XValidation:rule="has(self.width) == has(self.height)",message="set width and height together",fieldPath=".width"
// +kubebuilder:validation:XValidation:rule="!self.output.startsWith('file://') || (has(self.outputVolume) && has(self.volume) && has(self.volume.persistentVolumeClaim) && self.volume.persistentVolumeClaim.claimName == self.outputVolume.persistentVolumeClaim.claimName)",message="a file:// output needs spec.outputVolume and spec.volume naming the same PersistentVolumeClaim: encodes are written to it at /output and scored from it at /data",fieldPath=".output"
// +kubebuilder:validation:XValidation:rule="!has(self.volume) || has(self.volume.persistentVolumeClaim) || has(self.volume.csi)",message="a ladder's volume must be a persistentVolumeClaim or csi volume: its encode Pods mount it too, and the operator allows host paths and NFS servers to VmafxJobs only",fieldPath=".volume"
type VmafxLadderSpec struct {
	// reference is the URI of the pristine video to encode.
	// +required
	Reference VideoURI `json:"reference"`

	// resolutions are the sizes to encode at, 1 to 8.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	// +required
	Resolutions []LadderResolution `json:"resolutions"`

	// codecs are the encoders and their quality settings, 1 to 3, one per encoder. Every
	// resolution is encoded at every value of every codec: each such encode is a rung.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=3
	// +listType=map
	// +listMapKey=encoder
	// +required
	Codecs []LadderCodec `json:"codecs"`

	// output is the prefix under which the encodes (<output>/<rung>.mkv), their
	// per-frame scores (<output>/<rung>.json) and the ladder's report (ladder.json,
	// ladder.csv and the plot ladder.svg) are written: s3://bucket/prefix, gs://...,
	// azure://..., or file:///output/... on spec.outputVolume.
	// +required
	Output OutputURI `json:"output"`

	// encodeResources are the CPU and memory requests and limits of each encode Pod.
	// Unset: those of the operator's worker Pods (without the scoring slot). When set,
	// limits must give cpu (at most 64) and memory (at most 256Gi); requests, if given, at
	// most the limits; no other resource and no claims (an encode needs no slot or GPU).
	// +kubebuilder:validation:XValidation:rule="!has(self.claims)",message="encodeResources.claims is not supported: an encode Pod asks for cpu and memory only",fieldPath=".claims"
	// +kubebuilder:validation:XValidation:rule="!has(self.requests) || self.requests.all(k, k == 'cpu' || k == 'memory')",message="encodeResources.requests may name cpu and memory only (an encode needs no vmafx.dev/slot or GPU)",fieldPath=".requests"
	// +kubebuilder:validation:XValidation:rule="has(self.limits) && 'cpu' in self.limits && 'memory' in self.limits && self.limits.all(k, k == 'cpu' || k == 'memory')",message="encodeResources.limits must give cpu and memory, and nothing else: an encode Pod without limits could take a whole node",fieldPath=".limits"
	// +kubebuilder:validation:XValidation:rule="!has(self.limits) || !('cpu' in self.limits) || (quantity(string(self.limits['cpu'])).isGreaterThan(quantity('0')) && quantity(string(self.limits['cpu'])).compareTo(quantity('64')) <= 0)",message="encodeResources.limits.cpu must be above 0 and at most 64",fieldPath=".limits"
	// +kubebuilder:validation:XValidation:rule="!has(self.limits) || !('memory' in self.limits) || (quantity(string(self.limits['memory'])).isGreaterThan(quantity('0')) && quantity(string(self.limits['memory'])).compareTo(quantity('256Gi')) <= 0)",message="encodeResources.limits.memory must be above 0 and at most 256Gi",fieldPath=".limits"
	// +kubebuilder:validation:XValidation:rule="!has(self.requests) || !('cpu' in self.requests) || (!quantity(string(self.requests['cpu'])).isLessThan(quantity('0')) && (!has(self.limits) || !('cpu' in self.limits) || quantity(string(self.requests['cpu'])).compareTo(quantity(string(self.limits['cpu']))) <= 0))",message="encodeResources.requests.cpu must be at least 0 and at most encodeResources.limits.cpu",fieldPath=".requests"
	// +kubebuilder:validation:XValidation:rule="!has(self.requests) || !('memory' in self.requests) || (!quantity(string(self.requests['memory'])).isLessThan(quantity('0')) && (!has(self.limits) || !('memory' in self.limits) || quantity(string(self.requests['memory'])).compareTo(quantity(string(self.limits['memory']))) <= 0))",message="encodeResources.requests.memory must be at least 0 and at most encodeResources.limits.memory",fieldPath=".requests"
	// +optional
	EncodeResources *corev1.ResourceRequirements `json:"encodeResources,omitempty"`

	ScoringSettings `json:",inline"`
}

// RungPhase is where a ladder rung is.
// +kubebuilder:validation:Enum=Encoding;Scoring;Succeeded;Failed
type RungPhase string

// The phases of a rung.
const (
	RungEncoding  RungPhase = "Encoding"
	RungScoring   RungPhase = "Scoring"
	RungSucceeded RungPhase = "Succeeded"
	RungFailed    RungPhase = "Failed"
)

// LadderRung is one encode of a ladder and its score.
type LadderRung struct {
	// name of the rung, <height>p-<encoder>-<rateControl><value>, e.g. 720p-x264-crf28
	// (<width>x<height>-... when the width is set).
	Name string `json:"name"`
	// encoder is the ffmpeg encoder of the rung.
	Encoder LadderEncoder `json:"encoder"`
	// rateControl says what value is: crf or qp.
	RateControl RateControl `json:"rateControl"`
	// value is the rung's crf or qp.
	Value int32 `json:"value"`
	// height asked for, in pixels; the encode's actual size is in resolution.
	Height int32 `json:"height"`
	// width asked for, in pixels; 0 when the reference's aspect ratio is kept.
	// +optional
	Width int32 `json:"width,omitempty"`
	// phase of the rung.
	// +optional
	Phase RungPhase `json:"phase,omitempty"`
	// encodeAttempts is the number of encode Pods created for the rung.
	// +optional
	EncodeAttempts int32 `json:"encodeAttempts,omitempty"`
	// encodeFailures is the number of the rung's encode attempts that failed; backoffLimit
	// bounds it, and each retry waits a growing backoff, as a VmafxJob's attempts do.
	// +optional
	EncodeFailures int32 `json:"encodeFailures,omitempty"`
	// encodeLost is the number of the rung's encode attempts whose Pod was lost (evicted,
	// preempted, deleted, its node gone): retried at once, without counting against
	// backoffLimit.
	// +optional
	EncodeLost int32 `json:"encodeLost,omitempty"`
	// uri of the encode.
	// +optional
	URI string `json:"uri,omitempty"`
	// resolution of the encode, e.g. 1280x720.
	// +optional
	Resolution string `json:"resolution,omitempty"`
	// bitrate of the encode in bits per second (its size over its duration).
	// +optional
	Bitrate int64 `json:"bitrate,omitempty"`
	// bytes is the encode's size.
	// +optional
	Bytes int64 `json:"bytes,omitempty"`
	// job is the VmafxJob that scores the encode against the reference, scaled back to
	// the reference's size.
	// +optional
	Job string `json:"job,omitempty"`
	// score is the encode's pooled VMAF score.
	// +optional
	Score string `json:"score,omitempty"`
	// p5 is the 5th percentile of the encode's per-frame scores.
	// +optional
	P5 string `json:"p5,omitempty"`
	// worstFrame is the encode's lowest-scoring frame: its index and score.
	// +optional
	WorstFrame *JobFrame `json:"worstFrame,omitempty"`
	// hull is true for the rungs on the upper convex hull of bitrate against score: the
	// ladder's chosen rungs.
	// +optional
	Hull bool `json:"hull,omitempty"`
	// message says why the rung failed.
	// +optional
	Message string `json:"message,omitempty"`
}

// Condition types of a VmafxLadder.
const (
	// LadderComplete is True once every rung has an outcome and the hull is computed.
	LadderComplete = "Complete"
	// LadderFailed is True once the ladder cannot complete: every rung failed, or the
	// report could not be written.
	LadderFailed = "Failed"
	// LadderReportWritten is True once ladder.json, ladder.csv and ladder.svg are
	// written beside the encodes; False with the reason when they could not be.
	LadderReportWritten = "ReportWritten"
	// LadderPodRefused is True while the API server refuses to create one of the ladder's
	// Pods (a used-up quota); the pending deadline counts from its transition.
	LadderPodRefused = "PodRefused"
)

// VmafxLadderStatus is what the operator has observed of a ladder.
type VmafxLadderStatus struct {
	// observedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// phase is Pending, Running, Succeeded (every rung has an outcome, at least one a
	// score, and the report is written) or Failed.
	// +optional
	Phase JobPhase `json:"phase,omitempty"`
	// total is the number of rungs.
	// +optional
	Total int32 `json:"total,omitempty"`
	// encoded is the number of rungs encoded.
	// +optional
	Encoded int32 `json:"encoded,omitempty"`
	// scored is the number of rungs scored.
	// +optional
	Scored int32 `json:"scored,omitempty"`
	// failed is the number of rungs that failed.
	// +optional
	Failed int32 `json:"failed,omitempty"`
	// hull names the chosen rungs, the upper convex hull of bitrate against score, by
	// rising bitrate.
	// +listType=atomic
	// +optional
	Hull []string `json:"hull,omitempty"`
	// report is the URI prefix of ladder.json, ladder.csv and ladder.svg, once written.
	// +optional
	Report string `json:"report,omitempty"`
	// reportAttempts is the number of report Pods created.
	// +optional
	ReportAttempts int32 `json:"reportAttempts,omitempty"`
	// reportFailures is the number of report attempts that failed; backoffLimit bounds it,
	// and each retry waits a growing backoff, as a VmafxJob's attempts do.
	// +optional
	ReportFailures int32 `json:"reportFailures,omitempty"`
	// reportLost is the number of report attempts whose Pod was lost (evicted, preempted,
	// deleted, its node gone): retried at once, without counting against backoffLimit.
	// +optional
	ReportLost int32 `json:"reportLost,omitempty"`
	// rungs is the table, in grid order: resolutions, then codecs, then values.
	// +listType=atomic
	// +optional
	Rungs []LadderRung `json:"rungs,omitempty"`
	// conditions: Complete, Failed, ReportWritten, PodRefused.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// VmafxLadder encodes a reference at a grid of resolutions and quality settings, scores
// every encode against the reference, and reports the convex hull of bitrate against
// VMAF: the per-title encoding ladder. Every encode and every score is its own Pod.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=vmladder,categories=vmafx
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Rungs",type=integer,JSONPath=`.status.total`
// +kubebuilder:printcolumn:name="Encoded",type=integer,JSONPath=`.status.encoded`
// +kubebuilder:printcolumn:name="Scored",type=integer,JSONPath=`.status.scored`
// +kubebuilder:printcolumn:name="Hull",type=string,JSONPath=`.status.hull`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 180",message="metadata.name must be at most 180 characters: it prefixes the names of the ladder's Pods and VmafxJobs"
type VmafxLadder struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is what to encode and score. It is immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable: delete the ladder and create a new one"
	// +required
	Spec VmafxLadderSpec `json:"spec"`

	// status is what the operator observed.
	// +optional
	Status VmafxLadderStatus `json:"status,omitempty"`
}

// VmafxLadderList is a list of VmafxLadders.
//
// +kubebuilder:object:root=true
type VmafxLadderList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VmafxLadder `json:"items"`
}

func init() {
	SchemeBuilder.Register(&VmafxLadder{}, &VmafxLadderList{})
}

// Rungs expands the spec's grid into its rungs, in grid order: each resolution, each
// codec, each value, as written.
func (s *VmafxLadderSpec) Rungs() []LadderRung {
	var rungs []LadderRung
	for _, res := range s.Resolutions {
		size := fmt.Sprintf("%dp", res.Height)
		var width int32
		if res.Width != nil {
			width = *res.Width
			size = fmt.Sprintf("%dx%d", width, res.Height)
		}
		for _, c := range s.Codecs {
			rc := c.RateControl
			if rc == "" {
				rc = RateCRF
			}
			for _, v := range c.Values {
				rungs = append(rungs, LadderRung{
					Name:    fmt.Sprintf("%s-%s-%s%d", size, c.Encoder.Short(), rc, v),
					Encoder: c.Encoder, RateControl: rc, Value: v, Height: res.Height, Width: width,
				})
			}
		}
	}
	return rungs
}

// Codec returns the spec's codec of encoder e.
func (s *VmafxLadderSpec) Codec(e LadderEncoder) *LadderCodec {
	for i := range s.Codecs {
		if s.Codecs[i].Encoder == e {
			return &s.Codecs[i]
		}
	}
	return nil
}
