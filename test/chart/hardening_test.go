package chart_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	render "github.com/vmafx/vmafx/internal/chartrender"
)

const devicePluginWorkload = "DaemonSet vmafx-system/vmafx-device-plugin"

// TestHardened evaluates every Pod the chart makes, in every vendor, batch and operator
// combination, with the Pod Security Admission code the API server runs: every Pod but
// the device plugin's meets the restricted standard; the device plugin breaks only the
// rules its host access needs (hostPath volumes, root), and nothing else. Every container
// also has a read-only root filesystem, which the standards do not ask for.
func TestHardened(t *testing.T) {
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	restricted := api.LevelVersion{Level: api.LevelRestricted, Version: api.LatestVersion()}
	baseline := api.LevelVersion{Level: api.LevelBaseline, Version: api.LatestVersion()}
	forbidden := func(lv api.LevelVersion, pod corev1.PodTemplateSpec) []string {
		res := policy.AggregateCheckResults(evaluator.EvaluatePod(lv, &pod.ObjectMeta, &pod.Spec))
		return res.ForbiddenReasons
	}

	for _, c := range render.Cases() {
		t.Run(c.Name(), func(t *testing.T) {
			res := mustRender(t, c.Values())
			for name, pod := range podTemplates(t, res.Objects) {
				for _, ctr := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
					sc := ctr.SecurityContext
					if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
						t.Errorf("%s container %s: root filesystem not read-only", name, ctr.Name)
					}
					if sc == nil || sc.Privileged != nil && *sc.Privileged {
						t.Errorf("%s container %s: privileged", name, ctr.Name)
					}
				}
				if name != devicePluginWorkload {
					if reasons := forbidden(restricted, pod); len(reasons) > 0 {
						t.Errorf("%s breaks the restricted Pod Security Standard: %v", name, reasons)
					}
					continue
				}
				// The device plugin: root without capabilities and four host folders,
				// each with its reason in the template and in docs/device-plugin.md.
				if diff := cmp.Diff([]string{"hostPath volumes"}, forbidden(baseline, pod)); diff != "" {
					t.Errorf("%s: baseline violations (-want +got):\n%s", name, diff)
				}
				wantRestricted := []string{"restricted volume types", "runAsNonRoot != true", "runAsUser=0"}
				if diff := cmp.Diff(wantRestricted, forbidden(restricted, pod)); diff != "" {
					t.Errorf("%s: restricted violations (-want +got):\n%s", name, diff)
				}
				hostPaths := map[string]string{}
				mounts := map[string]corev1.VolumeMount{}
				for _, m := range pod.Spec.Containers[0].VolumeMounts {
					mounts[m.Name] = m
				}
				for _, v := range pod.Spec.Volumes {
					if v.HostPath == nil {
						continue
					}
					access := "rw"
					if mounts[v.Name].ReadOnly {
						access = "ro"
					}
					hostPaths[v.HostPath.Path] = access + " at " + mounts[v.Name].MountPath
				}
				wantHostPaths := map[string]string{
					"/var/lib/kubelet/device-plugins": "rw at /var/lib/kubelet/device-plugins",
					"/var/lib/kubelet/pod-resources":  "ro at /var/lib/kubelet/pod-resources",
					"/dev":                            "ro at /host/dev",
					"/sys":                            "ro at /host/sys",
					"/run/vmafx/selftest":             "rw at /run/vmafx/selftest",
				}
				if diff := cmp.Diff(wantHostPaths, hostPaths); diff != "" {
					t.Errorf("%s: host paths (-want +got):\n%s", name, diff)
				}
			}
		})
	}
}
