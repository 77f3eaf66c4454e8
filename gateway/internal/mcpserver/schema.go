package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// The tools' input schemas come from the installed VmafxJob CRD.
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get,resourceNames=vmafxjobs.vmafx.dev

// crdName is the VmafxJob CRD.
const crdName = "vmafxjobs." + "vmafx.dev"

// SpecSchema returns the JSON schema of a VmafxJob spec: the installed CRD's, read with
// c, or, when the caller may not read CRDs (a workstation user's kubeconfig), the one
// inferred from the Go type in apis (fields and types, without the CRD's rules, which the
// API server's dry run still applies).
func SpecSchema(ctx context.Context, c client.Reader) (map[string]any, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: crdName}, crd); err == nil {
		for _, v := range crd.Spec.Versions {
			if v.Name != vmafxv1.GroupVersion.Version || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			spec, ok := v.Schema.OpenAPIV3Schema.Properties["spec"]
			if !ok {
				break
			}
			return toMap(spec)
		}
	}
	s, err := jsonschema.For[vmafxv1.VmafxJobSpec](nil)
	if err != nil {
		return nil, fmt.Errorf("inferring the VmafxJob spec schema: %w", err)
	}
	return toMap(s)
}

// toMap turns a schema into plain JSON values, without the x-kubernetes-* extensions
// (CEL rules and list types mean nothing to an MCP client; the API server applies them).
func toMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	strip(m)
	return m, nil
}

func strip(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			if strings.HasPrefix(k, "x-kubernetes-") {
				delete(t, k)
				continue
			}
			strip(child)
		}
	case []any:
		for _, child := range t {
			strip(child)
		}
	}
}

// toolSchema is spec's schema with the tool's own properties added, spec's required list
// kept, and, for compare, distorted made a list of the same URIs.
func toolSchema(spec map[string]any, own map[string]any, listDistorted bool) map[string]any {
	props := map[string]any{}
	if p, ok := spec["properties"].(map[string]any); ok {
		maps.Copy(props, p)
	}
	required := []any{}
	if r, ok := spec["required"].([]any); ok {
		required = append(required, r...)
	}
	if listDistorted {
		one := props["distorted"]
		props["distorted"] = map[string]any{
			"type": "array", "minItems": 1, "maxItems": maxCompare, "items": one,
			"description": "the distorted videos to score against the reference, one job each",
		}
	}
	maps.Copy(props, own)
	return map[string]any{"type": "object", "properties": props, "required": required}
}
