package v1

import (
	"encoding/json"
	"fmt"
)

// ResultVersion is the version of the WorkerResult layout. The operator refuses any other.
const ResultVersion = "vmafx.dev/result/v1"

// WorkerResult is the compact summary a worker writes to its termination message (under
// 4 KiB, as the kubelet truncates more) and to stdout, and the operator parses into the
// job's status. Exactly one of the score fields or Error is meaningful.
//
// +kubebuilder:object:generate=false
type WorkerResult struct {
	// Version is ResultVersion.
	Version string `json:"version"`

	// Score is the pooled (mean) VMAF score.
	Score        float64 `json:"score"`
	HarmonicMean float64 `json:"harmonicMean"`
	Min          float64 `json:"min"`
	Max          float64 `json:"max"`
	Frames       int     `json:"frames"`
	FPS          float64 `json:"fps"`
	WallSeconds  float64 `json:"wallSeconds"`

	// Backend is the backend that ran; RequestedBackend is the one the slot offered
	// (VMAFX_BACKEND). They differ when a GPU backend fell back to the CPU.
	Backend          string `json:"backend"`
	RequestedBackend string `json:"requestedBackend,omitempty"`
	// Device is the accelerator that scored, when a GPU backend ran; nil on the CPU.
	Device *WorkerDevice `json:"device,omitempty"`
	// Decode says which decoder read the encoded inputs; nil when none was encoded.
	Decode *WorkerDecode `json:"decode,omitempty"`

	// Model is the model name; ModelSHA256 the hex SHA-256 of its JSON.
	Model         string `json:"model"`
	ModelSHA256   string `json:"modelSHA256,omitempty"`
	KernelVersion string `json:"kernelVersion,omitempty"`
	// WorkerVersion and WorkerCommit are the worker binary's release version and commit
	// (its --version), so that a score names the build that made it.
	WorkerVersion string `json:"workerVersion,omitempty"`
	WorkerCommit  string `json:"workerCommit,omitempty"`

	// Interval is set for a bootstrapped model (vmaf_b_v0.6.3): the pooled means of the
	// per-frame 95% confidence interval and bagged score.
	Interval *WorkerInterval `json:"interval,omitempty"`
	// Features are the pooled means of the extra metrics asked for, by libvmaf's names
	// (psnr_y, psnr_cb, psnr_cr, float_ssim, float_ms_ssim, cambi).
	Features map[string]float64 `json:"features,omitempty"`
	// DistortedScaledFrom is the distorted video's own size, e.g. "1280x720", when it was
	// scaled to the reference's size (bicubic) to be scored; empty when the sizes matched.
	DistortedScaledFrom string `json:"distortedScaledFrom,omitempty"`
	// Interlaced names the inputs ("reference", "distorted") whose frames are marked
	// interlaced. They are scored as stored, both fields woven, unless Deinterlaced.
	Interlaced []string `json:"interlaced,omitempty"`
	// Deinterlaced is set when interlaced frames were deinterlaced (bwdif) before scoring.
	Deinterlaced bool `json:"deinterlaced,omitempty"`
	// Alignment is what the frame offset search found (--auto-align, or the check of
	// every plain score); nil when it did not run or the inputs were too short.
	Alignment *WorkerAlignment `json:"alignment,omitempty"`
	// OutputError says why the per-frame output (the job's spec.output) was not written,
	// although the score above was made; empty when it was written or not asked for.
	OutputError string `json:"outputError,omitempty"`

	// Percentiles, WorstFrames and Scenes (worst_types.go) show where the score is made.
	Percentiles *WorkerPercentiles `json:"percentiles,omitempty"`
	WorstFrames []WorkerFrame      `json:"worstFrames,omitempty"`
	Scenes      *WorkerScenes      `json:"scenes,omitempty"`
	// Report is the URI of the report beside the output (report.json and the pictures),
	// ending in "/"; empty when none was written.
	Report string `json:"report,omitempty"`

	// Renditions are the rows of a worker that scored several distorted videos against
	// one decoded reference (renditions.go), in the order given; the score fields above
	// are then zero, and Error is set only when none could be scored for a cause they
	// share (the reference, the model, the backend).
	Renditions []WorkerRendition `json:"renditions,omitempty"`

	// Error is set when the worker failed.
	Error *WorkerError `json:"error,omitempty"`
}

// WorkerInterval is a bootstrapped model's uncertainty about a score: the pooled (mean)
// values of libvmaf's vmaf_ci_p95_lo, vmaf_ci_p95_hi, vmaf_bagging and vmaf_stddev.
//
// +kubebuilder:object:generate=false
type WorkerInterval struct {
	Low     float64 `json:"low"`
	High    float64 `json:"high"`
	Bagging float64 `json:"bagging"`
	StdDev  float64 `json:"stddev"`
}

// WorkerDevice describes the device a GPU backend scored on, and which features it
// computed there: a backend that has not ported every feature yet says so.
//
// +kubebuilder:object:generate=false
type WorkerDevice struct {
	// Name is the device's name, e.g. "NVIDIA H100 80GB HBM3".
	Name string `json:"name"`
	// Driver is the driver's name and version information.
	Driver string `json:"driver,omitempty"`
	// API is the compute API and the version the device supports, e.g. "Vulkan 1.3.230".
	API string `json:"api,omitempty"`
	// Features are the VMAF features computed on the device (motion, vif, adm).
	Features []string `json:"features,omitempty"`
	// HostFeatures are the VMAF features that still ran on the CPU.
	HostFeatures []string `json:"hostFeatures,omitempty"`
	// CPUFrames are the scored frames the CPU scored alone: while the device opened and
	// ran its self-test, and on the threads beside the device's (the worker's
	// --device-threads); the device took part in the others. Every frame is the CPU
	// kernel's either way.
	CPUFrames int `json:"cpuFrames,omitempty"`
}

// WorkerDecode says which decoder read each encoded input: ffmpeg's software decoders,
// or on a GPU slot the GPU's (NVDEC, VA-API) when the device and the ffmpeg build offer
// them.
//
// +kubebuilder:object:generate=false
type WorkerDecode struct {
	// Reference and Distorted are software, nvdec or vaapi; empty for an input that was
	// not decoded (raw YUV, Y4M).
	Reference string `json:"reference,omitempty"`
	Distorted string `json:"distorted,omitempty"`
	// Fallback says why a hardware decoder failed to start and software decoded instead.
	Fallback string `json:"fallback,omitempty"`
}

// WorkerError says why a worker failed.
//
// +kubebuilder:object:generate=false
type WorkerError struct {
	// Reason is a CamelCase cause, one of the WorkerReason constants.
	Reason string `json:"reason"`
	// Message is one line for people.
	Message string `json:"message"`
}

// Reasons a worker gives for failing, with the exit code it ends with.
const (
	ReasonBadInput    = "BadInput"    // exit 2: the videos or the request are unusable
	ReasonFetchFailed = "FetchFailed" // exit 3: an input could not be fetched
	ReasonBadModel    = "BadModel"    // exit 4: the model is unknown or corrupt
	ReasonInternal    = "Internal"    // exit 1: anything else
	// ReasonBackendUnavailable (exit 5): the slot's GPU cannot run the worker's kernels
	// (no Vulkan loader or driver in the container, no shaderInt64); retried, as another
	// node may be configured right.
	ReasonBackendUnavailable = "BackendUnavailable"
)

// ParseWorkerResult decodes a termination message. It fails, with a reason for people,
// when the message is not a WorkerResult of this version or claims a score it cannot have.
func ParseWorkerResult(msg []byte) (*WorkerResult, error) {
	var r WorkerResult
	if err := json.Unmarshal(msg, &r); err != nil {
		return nil, fmt.Errorf("termination message is not a worker result: %w", err)
	}
	if r.Version != ResultVersion {
		return nil, fmt.Errorf("worker result version %q, want %q", r.Version, ResultVersion)
	}
	if r.Error != nil {
		return &r, nil
	}
	if len(r.Renditions) > 0 {
		if err := checkRenditions(r.Renditions); err != nil {
			return nil, err
		}
		return &r, nil
	}
	if r.Frames <= 0 {
		return nil, fmt.Errorf("worker result has no frames")
	}
	if r.Score < 0 || r.Score > 100 || r.Min > r.Score || r.Max < r.Score {
		return nil, fmt.Errorf("worker result score %g (min %g, max %g) is out of range", r.Score, r.Min, r.Max)
	}
	return &r, nil
}
