package v1

// ScoringSettings are the VmafxJob fields that a VmafxComparison or a VmafxLadder hands
// to each VmafxJob it creates. Each means what the VmafxJob field of the same name means;
// a field left unset takes the VmafxJob's default there (its CRD's), so that defaults are
// spelled once.
type ScoringSettings struct {
	// model is the VMAF model, as in a VmafxJob (default vmaf_v0.6.1).
	// +optional
	Model ModelReference `json:"model,omitempty"`

	// backend is the compute backend to score on, as in a VmafxJob (default auto).
	// +optional
	Backend Backend `json:"backend,omitempty"`

	// priority, from 0 to 1000, is copied to every VmafxJob.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Priority int32 `json:"priority,omitempty"`

	// width of raw YUV frames in pixels, for a raw .yuv reference (and raw distorted
	// videos of a comparison); Y4M and encoded inputs carry their own.
	// +kubebuilder:validation:Minimum=16
	// +kubebuilder:validation:Maximum=16384
	// +optional
	Width *int32 `json:"width,omitempty"`

	// height of raw YUV frames in pixels; see width.
	// +kubebuilder:validation:Minimum=16
	// +kubebuilder:validation:Maximum=16384
	// +optional
	Height *int32 `json:"height,omitempty"`

	// pixelFormat of raw YUV frames (default yuv420p).
	// +optional
	PixelFormat PixelFormat `json:"pixelFormat,omitempty"`

	// features are metrics computed beside VMAF: psnr, ssim, ms_ssim, cambi.
	// +listType=set
	// +kubebuilder:validation:MaxItems=4
	// +optional
	Features []Feature `json:"features,omitempty"`

	// deinterlace interlaced inputs before scoring, as in a VmafxJob.
	// +optional
	Deinterlace bool `json:"deinterlace,omitempty"`

	// outputFormat of the per-frame outputs: json (the default) or csv.
	// +optional
	OutputFormat OutputFormat `json:"outputFormat,omitempty"`

	// outputVolume is the writable volume mounted at /output for file:// outputs.
	// +optional
	OutputVolume *OutputVolume `json:"outputVolume,omitempty"`

	// volume is mounted read-only at /data so that file:///data/... URIs resolve.
	// +optional
	Volume *JobVolume `json:"volume,omitempty"`

	// credentials names the Secret with the object store's keys, as in a VmafxJob.
	// +optional
	Credentials *Credentials `json:"credentials,omitempty"`

	// s3 reaches S3-compatible servers: endpoint, region, path-style addressing.
	// +optional
	S3 *S3Options `json:"s3,omitempty"`

	// backoffLimit is how many failed attempts of each Pod are retried (0 to 10; default 2).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	// +optional
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`

	// activeDeadlineSeconds bounds each attempt's run time, in seconds.
	// +kubebuilder:validation:Minimum=1
	// +optional
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`

	// pendingDeadlineSeconds bounds how long each attempt may wait to be placed, as in a
	// VmafxJob; in a ladder also each encode and report attempt, and how long the API
	// server may refuse to create one (a used-up quota), from its first refusal.
	// +kubebuilder:validation:Minimum=0
	// +optional
	PendingDeadlineSeconds *int64 `json:"pendingDeadlineSeconds,omitempty"`

	// worstFrames sets how many worst frames each job's status lists and asks for their
	// pictures beside each job's output, as in a VmafxJob (pictures need an output).
	// +optional
	WorstFrames *WorstFrames `json:"worstFrames,omitempty"`
}

// JobSpec returns the VmafxJob spec that scores distorted against reference with these
// settings; output is the per-frame output, or empty for none.
func (s *ScoringSettings) JobSpec(reference, distorted VideoURI, output OutputURI) VmafxJobSpec {
	c := s.DeepCopy()
	spec := VmafxJobSpec{
		Reference: reference, Distorted: distorted,
		Model: c.Model, Backend: c.Backend, Priority: c.Priority,
		Width: c.Width, Height: c.Height, PixelFormat: c.PixelFormat,
		Features: c.Features, Deinterlace: c.Deinterlace,
		Volume: c.Volume, Credentials: c.Credentials, S3: c.S3,
		BackoffLimit: c.BackoffLimit, ActiveDeadlineSeconds: c.ActiveDeadlineSeconds,
		PendingDeadlineSeconds: c.PendingDeadlineSeconds,
		WorstFrames:            c.WorstFrames,
	}
	if output != "" {
		spec.Output = &output
		spec.OutputFormat = c.OutputFormat
		spec.OutputVolume = c.OutputVolume
	}
	return spec
}

// OutputExtension is the file extension of per-frame outputs in format f.
func OutputExtension(f OutputFormat) string {
	if f == OutputCSV {
		return ".csv"
	}
	return ".json"
}

// JoinOutput returns the output URI name+ext under the prefix output (a "directory"
// URI such as s3://bucket/results/run1 or file:///output/run1).
func JoinOutput(output OutputURI, name string) OutputURI {
	p := string(output)
	for len(p) > 0 && p[len(p)-1] == '/' {
		p = p[:len(p)-1]
	}
	return OutputURI(p + "/" + name)
}
