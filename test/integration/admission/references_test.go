package admission

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// shipped is the rendered install file that carries the policy and the operator's roles.
const shipped = "manifests/default/vmafx-operator.yaml"

// operatorUser is the operator's service account, as the API server authenticates it.
var operatorUser = "system:serviceaccount:" + vmafxv1.SystemNamespace + ":vmafx-operator"

// reference is one object naming one Secret or PersistentVolumeClaim, and what the
// policy must say when a requester without the right creates it.
type reference struct {
	name   string
	object func(ns, name string) client.Object
	field  string // the field the message names
	target string // the Secret or PVC, as the message names it
	verb   string // the missing permission
}

// The tenant namespace holds the Secrets team-keys and registry-keys and the claims clips
// (inputs) and results (outputs). alice may get both Secrets and both claims and update
// results; mallory, a service account, may create every kind and get results, nothing
// more: it can read the results volume but not write it, and use no Secret.
var references = []reference{
	{"job credentials", func(ns, n string) client.Object {
		j := job(ns, n)
		j.Spec.Credentials = &vmafxv1.Credentials{SecretRef: vmafxv1.SecretReference{Name: "team-keys"}}
		return j
	}, "spec.credentials.secretRef.name", `Secret "team-keys"`, "get"},
	{"job output volume", func(ns, n string) client.Object {
		j := job(ns, n)
		j.Spec.Output = ptr.To[vmafxv1.OutputURI]("file:///output/scores.json")
		j.Spec.OutputVolume = &vmafxv1.OutputVolume{PersistentVolumeClaim: corev1.PersistentVolumeClaimVolumeSource{ClaimName: "results"}}
		return j
	}, "spec.outputVolume.persistentVolumeClaim.claimName", `PersistentVolumeClaim "results"`, "update"},
	{"job input volume", func(ns, n string) client.Object {
		j := job(ns, n)
		j.Spec.Volume = &vmafxv1.JobVolume{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "clips"}}
		return j
	}, "spec.volume.persistentVolumeClaim.claimName", `PersistentVolumeClaim "clips"`, "get"},
	{"comparison credentials", func(ns, n string) client.Object {
		c := comparison(ns, n)
		c.Spec.Credentials = &vmafxv1.Credentials{SecretRef: vmafxv1.SecretReference{Name: "team-keys"}}
		return c
	}, "spec.credentials.secretRef.name", `Secret "team-keys"`, "get"},
	{"comparison output volume", func(ns, n string) client.Object {
		c := comparison(ns, n)
		c.Spec.Output = ptr.To[vmafxv1.OutputURI]("file:///output/run1")
		c.Spec.OutputVolume = &vmafxv1.OutputVolume{PersistentVolumeClaim: corev1.PersistentVolumeClaimVolumeSource{ClaimName: "results"}}
		return c
	}, "spec.outputVolume.persistentVolumeClaim.claimName", `PersistentVolumeClaim "results"`, "update"},
	{"comparison input volume", func(ns, n string) client.Object {
		c := comparison(ns, n)
		c.Spec.Volume = &vmafxv1.JobVolume{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "clips"}}
		return c
	}, "spec.volume.persistentVolumeClaim.claimName", `PersistentVolumeClaim "clips"`, "get"},
	{"ladder credentials", func(ns, n string) client.Object {
		l := ladder(ns, n)
		l.Spec.Credentials = &vmafxv1.Credentials{SecretRef: vmafxv1.SecretReference{Name: "team-keys"}}
		return l
	}, "spec.credentials.secretRef.name", `Secret "team-keys"`, "get"},
	// A ladder's file output is read back from the same claim: mallory may read results,
	// so what it lacks is the write.
	{"ladder output volume", func(ns, n string) client.Object {
		l := ladder(ns, n)
		l.Spec.Output = "file:///output/title"
		l.Spec.Volume = &vmafxv1.JobVolume{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "results"}}
		l.Spec.OutputVolume = &vmafxv1.OutputVolume{PersistentVolumeClaim: corev1.PersistentVolumeClaimVolumeSource{ClaimName: "results"}}
		return l
	}, "spec.outputVolume.persistentVolumeClaim.claimName", `PersistentVolumeClaim "results"`, "update"},
	{"ladder input volume", func(ns, n string) client.Object {
		l := ladder(ns, n)
		l.Spec.Volume = &vmafxv1.JobVolume{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "clips"}}
		return l
	}, "spec.volume.persistentVolumeClaim.claimName", `PersistentVolumeClaim "clips"`, "get"},
	{"training credentials", func(ns, n string) client.Object {
		tr := training(ns, n)
		tr.Spec.DataSource.Credentials = &vmafxv1.Credentials{SecretRef: vmafxv1.SecretReference{Name: "team-keys"}}
		return tr
	}, "spec.dataSource.credentials.secretRef.name", `Secret "team-keys"`, "get"},
	{"training registry credentials", func(ns, n string) client.Object {
		tr := training(ns, n)
		tr.Spec.RegistryCredentials = &vmafxv1.SecretReference{Name: "registry-keys"}
		return tr
	}, "spec.registryCredentials.name", `Secret "registry-keys"`, "get"},
	{"training output claim", func(ns, n string) client.Object {
		tr := training(ns, n)
		tr.Spec.DataSource.OutputClaim = "clips"
		return tr
	}, "spec.dataSource.outputClaim", `PersistentVolumeClaim "clips"`, "get"},
	// Last, so that the indexes the other cases use (ref-9, a training) stay.
	{"job CSI volume's Secret", func(ns, n string) client.Object {
		j := job(ns, n)
		j.Spec.Volume = &vmafxv1.JobVolume{CSI: &corev1.CSIVolumeSource{Driver: "smb.csi.k8s.io",
			NodePublishSecretRef: &corev1.LocalObjectReference{Name: "team-keys"}}}
		return j
	}, "spec.volume.csi.nodePublishSecretRef.name", `Secret "team-keys"`, "get"},
}

// TestReferences applies the shipped policy and checks, for every field of every kind
// that names a Secret or a PersistentVolumeClaim, that a requester without the right is
// refused with a message naming the object, the field, the Secret or claim and the missing
// verb, and that one with the right is not; then that the operator's own child jobs, status
// writes and updates that keep the references pass.
func TestReferences(t *testing.T) {
	ctx := testenv.Context(t)
	admin := testenv.Client()
	ns := testenv.CreateNamespace(t)
	applyShipped(t)

	tenant := rbacv1.PolicyRule{APIGroups: []string{vmafxv1.GroupVersion.Group}, Verbs: []string{"create", "get", "list", "update", "patch"},
		Resources: []string{"vmafxjobs", "vmafxcomparisons", "vmafxladders", "vmafxmodeltrainings"}}
	mallory := serviceAccount(t, ns, "mallory", tenant,
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, ResourceNames: []string{"results"}, Verbs: []string{"get"}})
	alice := user(t, ns, "alice", tenant,
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"team-keys", "registry-keys"}, Verbs: []string{"get"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, ResourceNames: []string{"clips", "results"}, Verbs: []string{"get"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, ResourceNames: []string{"results"}, Verbs: []string{"update"}})
	malloryName := "system:serviceaccount:" + ns + ":mallory"

	// The policy and the roles take effect once the API server's informers have them.
	first := references[0]
	eventually(t, "the policy refuses mallory's job naming a Secret", func() error {
		err := mallory.Create(ctx, first.object(ns, "probe"), client.DryRunAll)
		if err == nil || !strings.Contains(err.Error(), first.field) {
			return fmt.Errorf("mallory's create: %w", err)
		}
		return nil
	})
	eventually(t, "alice's roles are in force", func() error {
		return alice.Create(ctx, first.object(ns, "probe"), client.DryRunAll)
	})

	for i, ref := range references {
		t.Run(ref.name, func(t *testing.T) {
			name := fmt.Sprintf("ref-%d", i)
			obj := ref.object(ns, name)
			kind := kindOf(t, obj)
			err := mallory.Create(ctx, obj.DeepCopyObject().(client.Object))
			if !apierrors.IsForbidden(err) {
				t.Fatalf("mallory's %s naming %s: %v, want Forbidden", kind, ref.target, err)
			}
			for _, want := range []string{
				kind + " " + ns + "/" + name, ref.field, ref.target,
				fmt.Sprintf("user %q may not %s", malloryName, ref.verb),
			} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the refusal does not say %q:\n%v", want, err)
				}
			}
			if err := alice.Create(ctx, obj.DeepCopyObject().(client.Object)); err != nil {
				t.Errorf("alice, who may %s %s: %v", ref.verb, ref.target, err)
			}
		})
	}

	// A tenant's own service account named like the operator's is not the operator.
	impostor := serviceAccount(t, ns, "vmafx-operator", tenant)
	eventually(t, "an impostor of the operator is refused", func() error {
		err := impostor.Create(ctx, first.object(ns, "impostor"), client.DryRunAll)
		if err == nil || !strings.Contains(err.Error(), first.field) {
			return fmt.Errorf("the impostor's create: %w", err)
		}
		return nil
	})

	t.Run("operator", func(t *testing.T) {
		operator := as(t, operatorUser, "system:serviceaccounts", "system:serviceaccounts:"+vmafxv1.SystemNamespace, "system:authenticated")
		// The child job of alice's comparison, as the operator writes it: with the
		// comparison's references, which the operator itself may not use.
		child := job(ns, "ref-3-d1")
		child.Spec.Credentials = &vmafxv1.Credentials{SecretRef: vmafxv1.SecretReference{Name: "team-keys"}}
		child.Spec.Output = ptr.To[vmafxv1.OutputURI]("file:///output/run1/d1.json")
		child.Spec.OutputVolume = &vmafxv1.OutputVolume{PersistentVolumeClaim: corev1.PersistentVolumeClaimVolumeSource{ClaimName: "results"}}
		child.Spec.Volume = &vmafxv1.JobVolume{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "clips"}}
		for _, check := range []struct{ resource, name, verb string }{{"secrets", "team-keys", "get"}, {"persistentvolumeclaims", "results", "update"}, {"persistentvolumeclaims", "clips", "get"}} {
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: operatorUser,
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Resource: check.resource, Name: check.name, Verb: check.verb}}}
			if err := admin.Create(ctx, sar); err != nil {
				t.Fatal(err)
			}
			if sar.Status.Allowed {
				t.Fatalf("the operator may %s %s %s: the test would not show its exemption", check.verb, check.resource, check.name)
			}
		}
		eventually(t, "the operator creates a child job with its roles as shipped", func() error {
			return operator.Create(ctx, child.DeepCopy())
		})

		// Its status writes, on its own job and on alice's.
		for _, name := range []string{"ref-3-d1", "ref-0"} {
			var j vmafxv1.VmafxJob
			if err := admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &j); err != nil {
				t.Fatal(err)
			}
			j.Status.Phase = vmafxv1.JobRunning
			if err := operator.Status().Update(ctx, &j); err != nil {
				t.Errorf("the operator's status update of job %s: %v", name, err)
			}
		}
	})

	t.Run("status", func(t *testing.T) {
		// bob writes status and may use none of the references: status never matches.
		bob := user(t, ns, "bob", rbacv1.PolicyRule{APIGroups: []string{vmafxv1.GroupVersion.Group}, Verbs: []string{"get", "update", "patch"},
			Resources: []string{"vmafxjobs/status", "vmafxcomparisons/status", "vmafxladders/status", "vmafxmodeltrainings/status"}})
		eventually(t, "bob writes the status of alice's job naming a Secret", func() error {
			var j vmafxv1.VmafxJob
			if err := admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ref-0"}, &j); err != nil {
				return err
			}
			j.Status.Message = "written by bob"
			return bob.Status().Update(ctx, &j)
		})
		var tr vmafxv1.VmafxModelTraining
		if err := admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ref-9"}, &tr); err != nil {
			t.Fatal(err)
		}
		tr.Status.Samples = 7
		if err := bob.Status().Update(ctx, &tr); err != nil {
			t.Errorf("bob's status update of alice's training: %v", err)
		}
	})

	t.Run("update", func(t *testing.T) {
		// An update that keeps the references needs no right on them: mallory labels
		// alice's job and suspends alice's training, each naming a Secret mallory may not get.
		var j vmafxv1.VmafxJob
		if err := admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ref-0"}, &j); err != nil {
			t.Fatal(err)
		}
		j.Labels = map[string]string{"reviewed-by": "mallory"}
		if err := mallory.Update(ctx, &j); err != nil {
			t.Errorf("mallory's label on alice's job: %v", err)
		}
		var tr vmafxv1.VmafxModelTraining
		if err := admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ref-9"}, &tr); err != nil {
			t.Fatal(err)
		}
		tr.Spec.Suspend = true
		if err := mallory.Update(ctx, tr.DeepCopy()); err != nil {
			t.Errorf("mallory suspending alice's training: %v", err)
		}
		// One that changes a reference is checked like a create.
		if err := admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ref-9"}, &tr); err != nil {
			t.Fatal(err)
		}
		tr.Spec.DataSource.Credentials.SecretRef.Name = "prod-keys"
		err := mallory.Update(ctx, tr.DeepCopy())
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `Secret "prod-keys"`) {
			t.Errorf("mallory pointing alice's training at prod-keys: %v, want Forbidden naming the Secret", err)
		}
		err = alice.Update(ctx, tr.DeepCopy())
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), fmt.Sprintf("user %q may not get", "alice")) {
			t.Errorf("alice pointing her training at prod-keys: %v, want Forbidden", err)
		}
	})
}

func job(ns, name string) *vmafxv1.VmafxJob {
	return &vmafxv1.VmafxJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: vmafxv1.VmafxJobSpec{
			Reference: "file:///data/ref.y4m",
			Distorted: "file:///data/dist.y4m",
		},
	}
}

func comparison(ns, name string) *vmafxv1.VmafxComparison {
	return &vmafxv1.VmafxComparison{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: vmafxv1.VmafxComparisonSpec{
			Reference: "file:///data/ref.y4m",
			Distorted: []vmafxv1.ComparisonInput{{URI: "file:///data/d1.y4m"}},
		},
	}
}

func ladder(ns, name string) *vmafxv1.VmafxLadder {
	return &vmafxv1.VmafxLadder{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: vmafxv1.VmafxLadderSpec{
			Reference:   "s3://media/title.mp4",
			Resolutions: []vmafxv1.LadderResolution{{Height: 360}},
			Codecs:      []vmafxv1.LadderCodec{{Encoder: vmafxv1.EncoderX264, Values: []int32{28}}},
			Output:      "s3://results/title",
		},
	}
}

func training(ns, name string) *vmafxv1.VmafxModelTraining {
	return &vmafxv1.VmafxModelTraining{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       vmafxv1.VmafxModelTrainingSpec{BaseModel: "vmaf_v0.6.1", OutputRegistry: "registry.example:5000/vmafx/models"},
	}
}

func kindOf(t *testing.T, obj client.Object) string {
	t.Helper()
	gvk, err := apiutil.GVKForObject(obj, testenv.Scheme)
	if err != nil {
		t.Fatal(err)
	}
	return gvk.Kind
}

// applyShipped creates, from the rendered install, the admission policies and their
// bindings, and the operator's ClusterRoles and ClusterRoleBindings, with strict field
// validation; they are deleted when the test ends.
func applyShipped(t *testing.T) {
	t.Helper()
	path := filepath.Join(testenv.RepoRoot(), shipped)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := client.WithFieldValidation(testenv.Client(), metav1.FieldValidationStrict)
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	policies := 0
	for {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", shipped, err)
		}
		switch kind := u.GetKind(); {
		case kind == "ValidatingAdmissionPolicy":
			policies++
		case kind == "ValidatingAdmissionPolicyBinding":
		case (kind == "ClusterRole" || kind == "ClusterRoleBinding") && strings.HasPrefix(u.GetName(), "vmafx-operator-"):
		default:
			continue
		}
		if err := c.Create(context.Background(), &u); err != nil {
			t.Fatalf("%s: creating %s %s: %v", shipped, u.GetKind(), u.GetName(), err)
		}
		t.Cleanup(func() { _ = testenv.Client().Delete(context.Background(), &u) })
	}
	if policies == 0 {
		t.Fatalf("%s holds no ValidatingAdmissionPolicy", shipped)
	}
}

// as returns a client that acts as user, in groups.
func as(t *testing.T, user string, groups ...string) client.Client {
	t.Helper()
	cfg := testenv.Config()
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	c, err := client.New(cfg, client.Options{Scheme: testenv.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// user grants the plain user name the rules in ns and returns a client acting as it.
func user(t *testing.T, ns, name string, rules ...rbacv1.PolicyRule) client.Client {
	t.Helper()
	grant(t, ns, name, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}, rules)
	return as(t, name, "system:authenticated")
}

// serviceAccount creates the service account name in ns, grants it the rules there and
// returns a client acting as it.
func serviceAccount(t *testing.T, ns, name string, rules ...rbacv1.PolicyRule) client.Client {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := testenv.Client().Create(context.Background(), sa); err != nil {
		t.Fatal(err)
	}
	grant(t, ns, "sa-"+name, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}, rules)
	return as(t, "system:serviceaccount:"+ns+":"+name, "system:serviceaccounts", "system:serviceaccounts:"+ns, "system:authenticated")
}

func grant(t *testing.T, ns, name string, subject rbacv1.Subject, rules []rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{subject},
	}
	for _, o := range []client.Object{role, binding} {
		if err := testenv.Client().Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
}

// eventually retries f until it succeeds, for what waits on the API server's informers.
func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		last = f()
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: never (last: %v)", what, last)
	}
}
