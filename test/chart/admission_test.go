package chart_test

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// referencesPolicy is the admission policy that checks a requester's rights on the Secrets
// and PersistentVolumeClaims its objects name (templates/operator-admission-policy.yaml).
const referencesPolicy = "vmafx-requester-may-use-references"

// TestReferencesPolicy checks the policy's shape: it ships by default with the operator and
// goes with operator.admissionPolicy.enabled, matches creates and updates of the four
// kinds that name Secrets and volumes but never their status, fails closed, exempts the
// operator's own service account (in the release namespace) and nobody else, and binds
// with Deny. The integration test (test/integration/admission) has a real API server
// enforce it.
func TestReferencesPolicy(t *testing.T) {
	res := mustRender(t, nil)
	vap := mustGet[*admissionregistrationv1.ValidatingAdmissionPolicy](t, res.Objects, "ValidatingAdmissionPolicy", referencesPolicy)
	binding := mustGet[*admissionregistrationv1.ValidatingAdmissionPolicyBinding](t, res.Objects, "ValidatingAdmissionPolicyBinding", referencesPolicy)

	if vap.Spec.FailurePolicy == nil || *vap.Spec.FailurePolicy != admissionregistrationv1.Fail {
		t.Errorf("failurePolicy = %v, want Fail", vap.Spec.FailurePolicy)
	}
	rules := vap.Spec.MatchConstraints.ResourceRules
	if len(rules) != 1 {
		t.Fatalf("%d resource rules, want 1", len(rules))
	}
	r := rules[0]
	if diff := cmp.Diff([]string{"vmafx.dev"}, r.APIGroups); diff != "" {
		t.Errorf("apiGroups (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]admissionregistrationv1.OperationType{"CREATE", "UPDATE"}, r.Operations); diff != "" {
		t.Errorf("operations (-want +got):\n%s", diff)
	}
	// The main resources only: a status write (the operator's, every few seconds) must
	// never wait for, or be refused by, this policy.
	want := []string{"vmafxcomparisons", "vmafxjobs", "vmafxladders", "vmafxmodeltrainings"}
	got := slices.Sorted(slices.Values(r.Resources))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}

	if len(vap.Spec.MatchConditions) != 1 {
		t.Fatalf("%d match conditions, want the operator's exemption alone", len(vap.Spec.MatchConditions))
	}
	operator := "system:serviceaccount:" + vmafxv1.SystemNamespace + ":vmafx-operator"
	if got, want := vap.Spec.MatchConditions[0].Expression, `request.userInfo.username != "`+operator+`"`; got != want {
		t.Errorf("match condition %q, want %q", got, want)
	}
	// The exempted account is the one the operator's Deployment runs as.
	if sa := mustGet[*appsv1.Deployment](t, res.Objects, "Deployment", "vmafx-operator").Spec.Template.Spec.ServiceAccountName; sa != "vmafx-operator" {
		t.Errorf("the operator runs as %q, the policy exempts %s", sa, operator)
	}

	// One authorization check per expression: each costs 350000 of the 1000000 an
	// expression may spend at run time.
	for _, v := range vap.Spec.Validations {
		if n := strings.Count(v.Expression, "authorizer."); n != 1 {
			t.Errorf("validation %q makes %d authorization checks, want 1", v.Expression, n)
		}
		if v.MessageExpression == "" || v.Reason == nil || *v.Reason != "Forbidden" {
			t.Errorf("validation %q: messageExpression %q, reason %v; want a message naming what is missing, Forbidden", v.Expression, v.MessageExpression, v.Reason)
		}
	}

	if binding.Spec.PolicyName != referencesPolicy || !slices.Equal(binding.Spec.ValidationActions, []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}) {
		t.Errorf("binding: policy %q, actions %v; want %s, [Deny]", binding.Spec.PolicyName, binding.Spec.ValidationActions, referencesPolicy)
	}
	if binding.Spec.ParamRef != nil || binding.Spec.MatchResources != nil {
		t.Errorf("binding narrows the policy: paramRef %v, matchResources %v", binding.Spec.ParamRef, binding.Spec.MatchResources)
	}

	for name, values := range map[string]map[string]any{
		"operator.admissionPolicy.enabled=false": {"operator": map[string]any{"admissionPolicy": map[string]any{"enabled": false}}},
		"operator.enabled=false":                 {"operator": map[string]any{"enabled": false}},
		"workload=server":                        {"workload": "server"},
	} {
		res := mustRender(t, values)
		for _, kind := range []string{"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"} {
			if find(res.Objects, kind, referencesPolicy) != nil {
				t.Errorf("%s: %s %s rendered", name, kind, referencesPolicy)
			}
		}
	}
	if _, err := renderValues(t, map[string]any{"operator": map[string]any{"admissionPolicy": map[string]any{"enabled": "yes"}}}); err == nil {
		t.Error(`operator.admissionPolicy.enabled "yes" accepted`)
	}
}

// TestReferencesPolicyCoversTheCRDs finds, in the CRDs of the kinds the policy matches,
// every field that names a Secret (the name of an object whose description names a
// Secret) or a PersistentVolumeClaim (claimName, or a string field whose description names
// one), and checks that the policy reads it from the object and from the old object. A new
// reference in the API fails here until the policy checks it.
func TestReferencesPolicyCoversTheCRDs(t *testing.T) {
	res := mustRender(t, nil)
	vap := mustGet[*admissionregistrationv1.ValidatingAdmissionPolicy](t, res.Objects, "ValidatingAdmissionPolicy", referencesPolicy)
	var expressions []string
	for _, v := range vap.Spec.Variables {
		expressions = append(expressions, v.Expression)
	}
	policy := strings.Join(expressions, "\n")
	matched := vap.Spec.MatchConstraints.ResourceRules[0].Resources

	fields := map[string]bool{}
	for _, o := range res.CRDs {
		crd := decode(t, o).(*apiextensionsv1.CustomResourceDefinition)
		if !slices.Contains(matched, crd.Spec.Names.Plural) {
			continue
		}
		for _, v := range crd.Spec.Versions {
			spec := v.Schema.OpenAPIV3Schema.Properties["spec"]
			for _, path := range references(spec, nil) {
				fields[strings.Join(path, ".")] = true
				selector := "spec.?" + strings.Join(path, ".?")
				for _, root := range []string{"object.", "oldObject."} {
					if !strings.Contains(policy, root+selector) {
						t.Errorf("%s: spec.%s names a Secret or a PersistentVolumeClaim; the policy does not read %s", crd.Spec.Names.Kind, strings.Join(path, "."), root+selector)
					}
				}
			}
		}
	}
	// The walk must find what is known today, or it proves nothing.
	for _, known := range []string{"credentials.secretRef.name", "outputVolume.persistentVolumeClaim.claimName", "volume.persistentVolumeClaim.claimName", "registryCredentials.name", "dataSource.credentials.secretRef.name", "dataSource.outputClaim", "volume.csi.nodePublishSecretRef.name"} {
		if !fields[known] {
			t.Errorf("spec.%s not found in the CRDs; found %v", known, slices.Sorted(maps.Keys(fields)))
		}
	}
}

var (
	namesSecret = regexp.MustCompile(`(?i)\bnames (a|the) Secret\b|\breference to the secret object\b`)
	namesClaim  = regexp.MustCompile(`\bPersistentVolumeClaim\b`)
)

// references returns the paths below s of the fields that name a Secret or a
// PersistentVolumeClaim.
func references(s apiextensionsv1.JSONSchemaProps, path []string) [][]string {
	var out [][]string
	for name, p := range s.Properties {
		here := append(slices.Clone(path), name)
		switch {
		case p.Type == "string" && (name == "claimName" || namesClaim.MatchString(p.Description)):
			out = append(out, here)
		case p.Type == "string" && name == "name" && namesSecret.MatchString(s.Description):
			out = append(out, here)
		case p.Type == "object":
			out = append(out, references(p, here)...)
		}
	}
	return out
}
