package modelregistry

import (
	"fmt"
	"regexp"
	"strings"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// The CRD's rule on a ModelReference (apis/vmafx/v1, ModelReference) accepts the same
// oci:// references this parses; only the worker and the trainer take them apart.

// ociReference matches what follows oci:// in a ModelReference (the CRD's rule).
var ociReference = regexp.MustCompile(`^([a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?)((/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)+)(:[A-Za-z0-9_][A-Za-z0-9._-]{0,127}|@sha256:[a-f0-9]{64})$`)

// Reference is a model version in an OCI registry.
type Reference struct {
	// Registry is the registry's host[:port].
	Registry string
	// Repository is the repository path in the registry, without a leading slash.
	Repository string
	// Reference is the tag or the sha256:<hex> digest.
	Reference string
}

// String returns the oci:// form.
func (m Reference) String() string {
	sep := ":"
	if strings.HasPrefix(m.Reference, "sha256:") {
		sep = "@"
	}
	return vmafxv1.OCIModelScheme + m.Registry + "/" + m.Repository + sep + m.Reference
}

// ParseReference parses oci://<registry>/<repository>:<tag> or ...@sha256:<digest>.
func ParseReference(ref string) (Reference, error) {
	rest, ok := strings.CutPrefix(ref, vmafxv1.OCIModelScheme)
	if !ok {
		return Reference{}, fmt.Errorf("model reference %q does not start with %s", ref, vmafxv1.OCIModelScheme)
	}
	m := ociReference.FindStringSubmatch(rest)
	if m == nil {
		return Reference{}, fmt.Errorf("model reference %q is not %s<registry>/<repository>:<tag> or @sha256:<digest>", ref, vmafxv1.OCIModelScheme)
	}
	return Reference{Registry: m[1], Repository: m[4][1:], Reference: m[8][1:]}, nil
}

// ParseRepository parses a VmafxModelTraining's outputRegistry, <registry>/<repository>
// with an optional oci:// prefix, into a Reference without its tag or digest.
func ParseRepository(repo string) (Reference, error) {
	m, err := ParseReference(vmafxv1.OCIModelScheme + strings.TrimPrefix(repo, vmafxv1.OCIModelScheme) + ":x")
	if err != nil {
		return Reference{}, fmt.Errorf("registry repository %q is not <registry>/<repository>", repo)
	}
	m.Reference = ""
	return m, nil
}
