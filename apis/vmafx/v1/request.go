package v1

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// The operator-to-worker contract, the way in: a WorkerRequest says what one worker Pod
// does (score, one step of a job split into chunks, a ladder's encode or its report),
// how, and where it writes. The operator builds one from the resource's spec and hands
// it to "vmafx-worker run --request JSON"; the worker's flags, for people, fill the same
// type, so the worker has one path from a request to its run. The way out is the
// WorkerResult (result.go), EncodeResult and ReportResult (encode.go).
//
// A request never carries credentials: those reach the worker as the files of a mounted
// Secret, which the request's store names by its directory.

// The apiVersion and kind of a WorkerRequest.
const (
	WorkerRequestAPIVersion = "vmafx.dev/v1"
	WorkerRequestKind       = "WorkerRequest"
)

// MaxWorkerRequestBytes bounds a request's JSON: well under Linux's 128 KiB limit on one
// command line argument, and far above what any request needs (a ladder report's ten
// rungs with long URIs are about 30 KiB).
const MaxWorkerRequestBytes = 64 << 10

// WorkerRequest is one worker run. Exactly one of Score, Encode and LadderReport is set.
//
// +kubebuilder:object:generate=false
type WorkerRequest struct {
	// APIVersion is WorkerRequestAPIVersion; Kind is WorkerRequestKind.
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`

	Score        *ScoreRequest        `json:"score,omitempty"`
	Encode       *EncodeRequest       `json:"encode,omitempty"`
	LadderReport *LadderReportRequest `json:"ladderReport,omitempty"`

	// Store configures object storage, for every mode.
	Store *RequestStore `json:"store,omitempty"`
}

// ScoreRequest scores Distorted against Reference with VMAF, or runs one step of a job
// split into chunks (Probe, Chunk, Merge; at most one). Zero values are the worker's
// defaults. The fields are the score command's flags (docs/worker.md) by their JSON names.
//
// +kubebuilder:object:generate=false
type ScoreRequest struct {
	// Reference and Distorted are the inputs' URIs (--reference, --distorted).
	Reference string `json:"reference"`
	Distorted string `json:"distorted"`
	// Renditions are more distorted inputs scored against the same decode of the
	// reference, each with its own output (--distorted and --output repeated): the
	// result then has one row per input, Distorted's first. Not with Probe, Chunk, Merge
	// nor Alignment.Auto. An older worker refuses the unknown field rather than scoring
	// half of the request.
	Renditions []RequestRendition `json:"renditions,omitempty"`
	// Width, Height and PixelFormat are the geometry of raw YUV inputs.
	Width       int    `json:"width,omitempty"`
	Height      int    `json:"height,omitempty"`
	PixelFormat string `json:"pixelFormat,omitempty"`
	// Model is a built-in model's name, a model file or an oci:// model version.
	Model string `json:"model,omitempty"`
	// Features are the extra metrics computed beside VMAF (psnr, ssim, ms_ssim, cambi).
	Features []string `json:"features,omitempty"`
	// Frames limits the frames scored (--frames START:COUNT).
	Frames *FrameRange `json:"frames,omitempty"`
	// Subsample scores every Subsample-th frame; 0 or 1 scores all.
	Subsample int `json:"subsample,omitempty"`
	// ScoringBitDepth scores at 10 or 12 bits per sample; 0 at the inputs' own.
	ScoringBitDepth int `json:"scoringBitDepth,omitempty"`
	// Encode is the distorted video's encode, for CAMBI.
	Encode *RequestEncode `json:"encode,omitempty"`
	// Alignment, when set, pairs frames by index after the starts (--align).
	Alignment *RequestAlignment `json:"alignment,omitempty"`
	// Deinterlace deinterlaces frames marked interlaced before scoring.
	Deinterlace bool `json:"deinterlace,omitempty"`
	// Output is where the per-frame scores go, in OutputFormat (json or csv).
	Output       string `json:"output,omitempty"`
	OutputFormat string `json:"outputFormat,omitempty"`
	// WorstFrames is how many worst frames the result lists; nil: DefaultWorstFrames.
	WorstFrames *int `json:"worstFrames,omitempty"`
	// Pictures writes the worst frames' pictures into the report beside Output.
	Pictures bool `json:"pictures,omitempty"`
	// SceneThreshold is the luma histogram distance that cuts a scene; 0: the default.
	SceneThreshold float64 `json:"sceneThreshold,omitempty"`

	// Probe counts the frame pairs without scoring: a chunked job's first step.
	Probe bool `json:"probe,omitempty"`
	// Chunk scores one range of the frames and writes a part: the middle steps.
	Chunk *RequestChunk `json:"chunk,omitempty"`
	// Merge joins the parts beside Output and pools them: the last step.
	Merge *RequestMerge `json:"merge,omitempty"`
}

// RequestRendition is one more distorted input of a score (ScoreRequest.Renditions),
// and where its per-frame scores go (empty: nowhere).
//
// +kubebuilder:object:generate=false
type RequestRendition struct {
	Distorted string `json:"distorted"`
	Output    string `json:"output,omitempty"`
}

// FrameRange is Count frames from Start; Count 0 means to the end.
//
// +kubebuilder:object:generate=false
type FrameRange struct {
	Start int `json:"start,omitempty"`
	Count int `json:"count,omitempty"`
}

// RequestEncode is the size and bit depth the distorted video was encoded at; 0: the
// input's own.
//
// +kubebuilder:object:generate=false
type RequestEncode struct {
	Width    int `json:"width,omitempty"`
	Height   int `json:"height,omitempty"`
	BitDepth int `json:"bitDepth,omitempty"`
}

// RequestAlignment skips each input's first frames, or with Auto has the worker find
// the starts, searching Window offsets either side of zero (0: the worker's default).
//
// +kubebuilder:object:generate=false
type RequestAlignment struct {
	ReferenceStart int  `json:"referenceStart,omitempty"`
	DistortedStart int  `json:"distortedStart,omitempty"`
	Auto           bool `json:"auto,omitempty"`
	Window         int  `json:"window,omitempty"`
}

// RequestChunk is one chunk of a split job: Count frames from Start of TotalFrames (as the
// probe counted them), its per-frame scores written to Part.
//
// +kubebuilder:object:generate=false
type RequestChunk struct {
	Start       int    `json:"start"`
	Count       int    `json:"count"`
	TotalFrames int    `json:"totalFrames"`
	Part        string `json:"part"`
}

// RequestMerge merges the Parts chunk parts beside the score's output.
//
// +kubebuilder:object:generate=false
type RequestMerge struct {
	Parts int `json:"parts"`
}

// EncodeRequest encodes Reference at one rung of a ladder and writes it to Output.
//
// +kubebuilder:object:generate=false
type EncodeRequest struct {
	Reference   string        `json:"reference"`
	Output      string        `json:"output"`
	Encoder     LadderEncoder `json:"encoder"`
	RateControl RateControl   `json:"rateControl,omitempty"`
	Value       int           `json:"value"`
	Preset      string        `json:"preset,omitempty"`
	// Width and Height are the encode's size; Width 0 keeps the aspect ratio.
	Width  int `json:"width,omitempty"`
	Height int `json:"height"`
	// RawWidth, RawHeight and PixelFormat are the geometry of a raw YUV reference.
	RawWidth    int    `json:"rawWidth,omitempty"`
	RawHeight   int    `json:"rawHeight,omitempty"`
	PixelFormat string `json:"pixelFormat,omitempty"`
}

// LadderReportRequest writes a ladder's table and plot under Output.
//
// +kubebuilder:object:generate=false
type LadderReportRequest struct {
	Output string `json:"output"`
	// Name is the ladder's name, the plot's title.
	Name  string       `json:"name,omitempty"`
	Rungs []LadderRung `json:"rungs"`
}

// RequestStore configures object storage: where the mounted credentials are, and an
// S3-compatible server's endpoint, region and addressing (each overrides the
// credentials' own; S3PathStyle nil leaves it to them).
//
// +kubebuilder:object:generate=false
type RequestStore struct {
	CredentialsDir string `json:"credentialsDir,omitempty"`
	S3Endpoint     string `json:"s3Endpoint,omitempty"`
	S3Region       string `json:"s3Region,omitempty"`
	S3PathStyle    *bool  `json:"s3PathStyle,omitempty"`
}

// NewWorkerRequest returns a request of this version with no mode set.
func NewWorkerRequest() *WorkerRequest {
	return &WorkerRequest{APIVersion: WorkerRequestAPIVersion, Kind: WorkerRequestKind}
}

// ParseWorkerRequest decodes and checks a request. It refuses, with an error naming the
// field, a request larger than MaxWorkerRequestBytes, of another apiVersion or kind, with
// a field this version does not know, or with a value out of range; the worker checks
// the rest (URIs, pixel formats, models, how fields go together) as it does for flags.
func ParseWorkerRequest(data []byte) (*WorkerRequest, error) {
	if len(data) > MaxWorkerRequestBytes {
		return nil, fmt.Errorf("worker request is %d bytes, more than %d", len(data), MaxWorkerRequestBytes)
	}
	// Unmarshal also refuses anything after the object, so the decoder below sees one.
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("worker request is not a JSON object: %w", err)
	}
	// The version first: a newer request's fields are unknown here for that reason.
	if head.APIVersion != WorkerRequestAPIVersion || head.Kind != WorkerRequestKind {
		return nil, fmt.Errorf("apiVersion %q, kind %q: this worker reads apiVersion %q, kind %q", head.APIVersion, head.Kind,
			WorkerRequestAPIVersion, WorkerRequestKind)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r WorkerRequest
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("worker request: %w", err)
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

// Validate checks each field on its own: required, in range, known. It names the field.
func (r *WorkerRequest) Validate() error {
	var modes []string
	for name, set := range map[string]bool{"score": r.Score != nil, "encode": r.Encode != nil, "ladderReport": r.LadderReport != nil} {
		if set {
			modes = append(modes, name)
		}
	}
	if len(modes) != 1 {
		return fmt.Errorf("worker request: want exactly one of score, encode and ladderReport, got %d", len(modes))
	}
	var errs fieldErrors
	if st := r.Store; st != nil && st.S3Endpoint != "" {
		if u, err := url.Parse(st.S3Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs.add("store.s3Endpoint", fmt.Sprintf("%q: want an http:// or https:// URL", st.S3Endpoint))
		}
	}
	switch {
	case r.Score != nil:
		r.Score.validate(&errs)
	case r.Encode != nil:
		e := r.Encode
		errs.required("encode.reference", e.Reference)
		errs.required("encode.output", e.Output)
		errs.required("encode.encoder", string(e.Encoder))
		errs.atLeast("encode.value", e.Value, 0)
		errs.atLeast("encode.width", e.Width, 0)
		errs.atLeast("encode.height", e.Height, 1)
		errs.atLeast("encode.rawWidth", e.RawWidth, 0)
		errs.atLeast("encode.rawHeight", e.RawHeight, 0)
	case r.LadderReport != nil:
		errs.required("ladderReport.output", r.LadderReport.Output)
	}
	return errs.err()
}

func (s *ScoreRequest) validate(errs *fieldErrors) {
	errs.required("score.reference", s.Reference)
	errs.required("score.distorted", s.Distorted)
	errs.atLeast("score.width", s.Width, 0)
	errs.atLeast("score.height", s.Height, 0)
	errs.atLeast("score.subsample", s.Subsample, 0)
	if d := s.ScoringBitDepth; d != 0 && d != 10 && d != 12 {
		errs.add("score.scoringBitDepth", fmt.Sprintf("%d: want 10 or 12 (0: the inputs' own)", d))
	}
	for i, f := range s.Features {
		errs.required(fmt.Sprintf("score.features[%d]", i), f)
	}
	if f := s.Frames; f != nil {
		errs.atLeast("score.frames.start", f.Start, 0)
		errs.atLeast("score.frames.count", f.Count, 0)
	}
	if e := s.Encode; e != nil {
		errs.atLeast("score.encode.width", e.Width, 0)
		errs.atLeast("score.encode.height", e.Height, 0)
		errs.atLeast("score.encode.bitDepth", e.BitDepth, 0)
	}
	if a := s.Alignment; a != nil {
		errs.atLeast("score.alignment.referenceStart", a.ReferenceStart, 0)
		errs.atLeast("score.alignment.distortedStart", a.DistortedStart, 0)
		errs.atLeast("score.alignment.window", a.Window, 0)
	}
	if f := s.OutputFormat; f != "" && f != string(OutputJSON) && f != "csv" {
		errs.add("score.outputFormat", fmt.Sprintf("%q: want json or csv", f))
	}
	if w := s.WorstFrames; w != nil && (*w < 0 || *w > MaxWorstFrames) {
		errs.add("score.worstFrames", fmt.Sprintf("%d: want 0 to %d", *w, MaxWorstFrames))
	}
	if t := s.SceneThreshold; t < 0 || t > 1 {
		errs.add("score.sceneThreshold", fmt.Sprintf("%g: want a number above 0, at most 1 (0: the default)", t))
	}
	if c := s.Chunk; c != nil {
		errs.atLeast("score.chunk.start", c.Start, 0)
		errs.atLeast("score.chunk.count", c.Count, 1)
	}
	if m := s.Merge; m != nil {
		errs.atLeast("score.merge.parts", m.Parts, 1)
	}
	s.validateRenditions(errs)
}

// validateRenditions checks the renditions: how many, and each one's input. The modes
// they do not go with are the worker's to refuse, as for flags.
func (s *ScoreRequest) validateRenditions(errs *fieldErrors) {
	if len(s.Renditions) == 0 {
		return
	}
	if n := len(s.Renditions) + 1; n > MaxWorkerRenditions {
		errs.add("score.renditions", fmt.Sprintf("%d distorted inputs with score.distorted: at most %d", n, MaxWorkerRenditions))
	}
	for i, r := range s.Renditions {
		errs.required(fmt.Sprintf("score.renditions[%d].distorted", i), r.Distorted)
	}
}

// fieldErrors collects "field: problem" lines.
type fieldErrors []string

func (e *fieldErrors) add(field, problem string) { *e = append(*e, field+": "+problem) }

func (e *fieldErrors) required(field, v string) {
	if v == "" {
		e.add(field, "required")
	}
}

func (e *fieldErrors) atLeast(field string, v, lo int) {
	if v < lo {
		e.add(field, fmt.Sprintf("%d: want %d or more", v, lo))
	}
}

func (e fieldErrors) err() error {
	if len(e) == 0 {
		return nil
	}
	return errors.New("worker request: " + strings.Join(e, "; "))
}
