package v1

import (
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

// IsOCI reports whether r names a model in a registry rather than a built-in model.
func (r ModelReference) IsOCI() bool { return strings.HasPrefix(string(r), OCIModelScheme) }
