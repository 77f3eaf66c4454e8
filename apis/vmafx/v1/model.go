package v1

import (
	"fmt"
	"regexp"
	"strings"
)

// DefaultModel is the VMAF model used when a job names none.
const DefaultModel = "vmaf_v0.6.1"

// BuiltinModels are the models every worker carries: the worker's kernel embeds them
// (vmaf), the CRD's validation of spec.model and spec.baseModel lists them (a test
// checks the generated CRD against this list), and the operator and trainer check names
// against it.
var BuiltinModels = []string{
	"vmaf_v0.6.1", "vmaf_v0.6.1neg", "vmaf_4k_v0.6.1", "vmaf_4k_v0.6.1neg", "vmaf_b_v0.6.3",
	"vmaf_v1.0.16_3d0h", "vmaf_v1.0.16_5d0h", "vmaf_v1.0.16_1d5h_2160", "vmaf_v1.0.16_3d0h_2160",
	"vmaf_v1.0.16_hfr_3d0h", "vmaf_v1.0.16_hfr_5d0h", "vmaf_v1.0.16_hfr_1d5h_2160", "vmaf_v1.0.16_hfr_3d0h_2160",
	"vmaf_v0.6.1phone", "vmaf_v0.6.1negphone",
}

// TrainableModels are the built-in models a VmafxModelTraining can start from. The phone
// variants are vmaf_v0.6.1 and vmaf_v0.6.1neg with a score transform that the model file
// cannot switch on, so a trained model is always of a model without it.
var TrainableModels = []string{"vmaf_v0.6.1", "vmaf_v0.6.1neg"}

// ModelReference names a VMAF model: a built-in model, or a model version in an OCI
// registry, oci://<registry>/<repository>:<tag> or oci://<registry>/<repository>@sha256:<hex>.
// +kubebuilder:validation:MaxLength=512
// +kubebuilder:validation:XValidation:rule="self in ['vmaf_v0.6.1', 'vmaf_v0.6.1neg', 'vmaf_4k_v0.6.1', 'vmaf_4k_v0.6.1neg', 'vmaf_b_v0.6.3', 'vmaf_v1.0.16_3d0h', 'vmaf_v1.0.16_5d0h', 'vmaf_v1.0.16_1d5h_2160', 'vmaf_v1.0.16_3d0h_2160', 'vmaf_v1.0.16_hfr_3d0h', 'vmaf_v1.0.16_hfr_5d0h', 'vmaf_v1.0.16_hfr_1d5h_2160', 'vmaf_v1.0.16_hfr_3d0h_2160', 'vmaf_v0.6.1phone', 'vmaf_v0.6.1negphone'] || self.matches('^oci://[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?(/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)+(:[A-Za-z0-9_][A-Za-z0-9._-]{0,127}|@sha256:[a-f0-9]{64})$')",message="model must be a built-in model (vmaf_v0.6.1, vmaf_v0.6.1neg, vmaf_4k_v0.6.1, vmaf_4k_v0.6.1neg, vmaf_b_v0.6.3, vmaf_v1.0.16_3d0h, vmaf_v1.0.16_5d0h, vmaf_v1.0.16_1d5h_2160, vmaf_v1.0.16_3d0h_2160, vmaf_v1.0.16_hfr_3d0h, vmaf_v1.0.16_hfr_5d0h, vmaf_v1.0.16_hfr_1d5h_2160, vmaf_v1.0.16_hfr_3d0h_2160, vmaf_v0.6.1phone, vmaf_v0.6.1negphone) or a trained model version oci://<registry>/<repository>:<tag> or oci://<registry>/<repository>@sha256:<digest>"
type ModelReference string

// OCIModelScheme prefixes a model reference that names a model version in a registry.
const OCIModelScheme = "oci://"

// ociReference matches what follows oci:// in a ModelReference (the CRD's rule).
var ociReference = regexp.MustCompile(`^([a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?)((/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)+)(:[A-Za-z0-9_][A-Za-z0-9._-]{0,127}|@sha256:[a-f0-9]{64})$`)

// OCIModel is a model version in an OCI registry.
type OCIModel struct {
	// Registry is the registry's host[:port].
	Registry string
	// Repository is the repository path in the registry, without a leading slash.
	Repository string
	// Reference is the tag or the sha256:<hex> digest.
	Reference string
}

// String returns the oci:// form.
func (m OCIModel) String() string {
	sep := ":"
	if strings.HasPrefix(m.Reference, "sha256:") {
		sep = "@"
	}
	return OCIModelScheme + m.Registry + "/" + m.Repository + sep + m.Reference
}

// IsOCI reports whether r names a model in a registry rather than a built-in model.
func (r ModelReference) IsOCI() bool { return strings.HasPrefix(string(r), OCIModelScheme) }

// ParseOCIModel parses oci://<registry>/<repository>:<tag> or ...@sha256:<digest>.
func ParseOCIModel(ref string) (OCIModel, error) {
	rest, ok := strings.CutPrefix(ref, OCIModelScheme)
	if !ok {
		return OCIModel{}, fmt.Errorf("model reference %q does not start with %s", ref, OCIModelScheme)
	}
	m := ociReference.FindStringSubmatch(rest)
	if m == nil {
		return OCIModel{}, fmt.Errorf("model reference %q is not %s<registry>/<repository>:<tag> or @sha256:<digest>", ref, OCIModelScheme)
	}
	return OCIModel{Registry: m[1], Repository: m[4][1:], Reference: m[8][1:]}, nil
}

// ParseRepository parses a VmafxModelTraining's outputRegistry, <registry>/<repository>
// with an optional oci:// prefix, into an OCIModel without a Reference.
func ParseRepository(repo string) (OCIModel, error) {
	m, err := ParseOCIModel(OCIModelScheme + strings.TrimPrefix(repo, OCIModelScheme) + ":x")
	if err != nil {
		return OCIModel{}, fmt.Errorf("registry repository %q is not <registry>/<repository>", repo)
	}
	m.Reference = ""
	return m, nil
}
