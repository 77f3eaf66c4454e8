package chart_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	kubeschedulerconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	kubeschedulerscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	kubeschedulervalidation "k8s.io/kubernetes/pkg/scheduler/apis/config/validation"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	render "github.com/vmafx/vmafx/internal/chartrender"
	placementconfig "github.com/vmafx/vmafx/scheduler-plugin/apis/config"
	_ "github.com/vmafx/vmafx/scheduler-plugin/apis/config/scheme" // VmafxPlacement args decode
	placementvalidation "github.com/vmafx/vmafx/scheduler-plugin/apis/config/validation"
)

// TestServiceMonitor renders ServiceMonitors, and the metrics Services they select, only
// for a cluster that serves the Prometheus Operator's API, and only when enabled.
func TestServiceMonitor(t *testing.T) {
	tests := []struct {
		name    string
		values  map[string]any
		api     bool
		want    []string
		wantSvc []string
	}{
		{"no Prometheus Operator", nil, false, nil, nil},
		{"Prometheus Operator", nil, true, []string{"vmafx-device-plugin", "vmafx-operator"}, []string{"vmafx-device-plugin-metrics", "vmafx-operator-metrics"}},
		{"disabled", map[string]any{"monitoring": map[string]any{"serviceMonitor": map[string]any{"enabled": false}}}, true, nil, nil},
		{"no operator", map[string]any{"operator": map[string]any{"enabled": false}}, true, []string{"vmafx-device-plugin"}, []string{"vmafx-device-plugin-metrics"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []func(*render.Options)
			if tt.api {
				opts = append(opts, withServiceMonitors)
			}
			res := mustRender(t, tt.values, opts...)
			names := func(kind string) []string {
				var out []string
				for _, o := range ofKind(res.Objects, kind) {
					out = append(out, o.GetName())
				}
				slices.Sort(out)
				return out
			}
			if diff := cmp.Diff(tt.want, names("ServiceMonitor")); diff != "" {
				t.Errorf("ServiceMonitors (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSvc, names("Service")); diff != "" {
				t.Errorf("Services (-want +got):\n%s", diff)
			}
			// Each Service selects its component's Pods and reaches the metrics port.
			templates := podTemplates(t, res.Objects)
			for _, name := range tt.wantSvc {
				svc := mustGet[*corev1.Service](t, res.Objects, "Service", name)
				component := strings.TrimSuffix(name, "-metrics")
				var pod *corev1.PodTemplateSpec
				for _, tmpl := range templates {
					if tmpl.Labels["app.kubernetes.io/name"] == component {
						pod = &tmpl
					}
				}
				if pod == nil {
					t.Fatalf("no Pods for Service %s", name)
				}
				for k, v := range svc.Spec.Selector {
					if pod.Labels[k] != v {
						t.Errorf("Service %s selects %s=%s, which %s's Pods do not carry", name, k, v, component)
					}
				}
				target := svc.Spec.Ports[0].TargetPort.String()
				if !slices.ContainsFunc(pod.Spec.Containers[0].Ports, func(p corev1.ContainerPort) bool { return p.Name == target }) {
					t.Errorf("Service %s targets port %q, which %s does not serve", name, target, component)
				}
			}
		})
	}
}

func TestPodDisruptionBudget(t *testing.T) {
	if pdb := ofKind(mustRender(t, nil).Objects, "PodDisruptionBudget"); len(pdb) != 0 {
		t.Errorf("a PodDisruptionBudget by default: %v", pdb)
	}
	res := mustRender(t, map[string]any{"operator": map[string]any{
		"replicaCount":        2,
		"podDisruptionBudget": map[string]any{"enabled": true},
	}})
	pdb := mustGet[*policyv1.PodDisruptionBudget](t, res.Objects, "PodDisruptionBudget", "vmafx-operator")
	if got, want := pdb.Spec.MaxUnavailable, intstr.FromInt32(1); got == nil || *got != want {
		t.Errorf("maxUnavailable = %v, want %v", got, want)
	}
	deploy := mustGet[*appsv1.Deployment](t, res.Objects, "Deployment", "vmafx-operator")
	for k, v := range pdb.Spec.Selector.MatchLabels {
		if deploy.Spec.Template.Labels[k] != v {
			t.Errorf("the PodDisruptionBudget selects %s=%s, which the operator's Pods do not carry", k, v)
		}
	}
	if *deploy.Spec.Replicas != 2 {
		t.Errorf("operator replicas = %d, want 2", *deploy.Spec.Replicas)
	}
}

// TestSchedulerConfig loads the KubeSchedulerConfiguration the chart renders as
// vmafx-scheduler loads it (kube-scheduler's strict decoder with the VmafxPlacement args
// registered) and validates it with kube-scheduler's and the plugin's own validation, for
// the shipped configuration and with the values laid over it.
func TestSchedulerConfig(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
		want   func(*kubeschedulerconfig.KubeSchedulerConfiguration, *placementconfig.VmafxPlacementArgs) string
	}{{
		name: "shipped",
		want: func(c *kubeschedulerconfig.KubeSchedulerConfiguration, a *placementconfig.VmafxPlacementArgs) string {
			if !c.LeaderElection.LeaderElect || a.ScoringStrategy != placementconfig.Spread {
				return "not the shipped configuration"
			}
			return ""
		},
	}, {
		name: "placement and leader election from values",
		values: map[string]any{"scheduler": map[string]any{
			"leaderElect": false,
			"placement": map[string]any{
				"scoringStrategy":     "BinPack",
				"heartbeatStaleAfter": "90s",
				"weights":             map[string]any{"slots": 5, "vendor": 0},
				"vendorPreference":    []any{"amd", "nvidia"},
			},
		}},
		want: func(c *kubeschedulerconfig.KubeSchedulerConfiguration, a *placementconfig.VmafxPlacementArgs) string {
			switch {
			case c.LeaderElection.LeaderElect:
				return "leader election still on"
			case a.ScoringStrategy != placementconfig.BinPack || a.HeartbeatStaleAfter.Seconds() != 90:
				return "scoringStrategy or heartbeatStaleAfter not taken from values"
			case a.Weights.Slots != 5 || a.Weights.Freshness != 1 || a.Weights.Vendor != 0:
				return "weights not merged: slots and vendor (0) from values, freshness as shipped"
			case !slices.Equal(a.VendorPreference, []vmafxv1.GPUVendor{vmafxv1.VendorAMD, vmafxv1.VendorNVIDIA}):
				return "vendorPreference not taken from values"
			}
			return ""
		},
	}}
	var checksums []string
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustRender(t, tt.values)
			cm := mustGet[*corev1.ConfigMap](t, res.Objects, "ConfigMap", "vmafx-scheduler-config")
			obj, _, err := kubeschedulerscheme.Codecs.UniversalDecoder().Decode([]byte(cm.Data["config.yaml"]), nil, nil)
			if err != nil {
				t.Fatalf("vmafx-scheduler would not load config.yaml: %v\n%s", err, cm.Data["config.yaml"])
			}
			cfg := obj.(*kubeschedulerconfig.KubeSchedulerConfiguration)
			if err := kubeschedulervalidation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
				t.Errorf("kube-scheduler refuses config.yaml: %v", err)
			}
			var args *placementconfig.VmafxPlacementArgs
			for _, p := range cfg.Profiles {
				for _, pc := range p.PluginConfig {
					if a, ok := pc.Args.(*placementconfig.VmafxPlacementArgs); ok && p.SchedulerName == vmafxv1.SchedulerName {
						args = a
					}
				}
			}
			if args == nil {
				t.Fatalf("no VmafxPlacement args in the %s profile", vmafxv1.SchedulerName)
			}
			if errs := placementvalidation.ValidateVmafxPlacementArgs(nil, args); len(errs) > 0 {
				t.Errorf("VmafxPlacement refuses its args: %v", errs.ToAggregate())
			}
			if problem := tt.want(cfg, args); problem != "" {
				t.Errorf("%s:\n%s", problem, cm.Data["config.yaml"])
			}
			deploy := mustGet[*appsv1.Deployment](t, res.Objects, "Deployment", "vmafx-scheduler")
			checksums = append(checksums, deploy.Spec.Template.Annotations["checksum/config"])
		})
	}
	// A changed configuration changes the Pod template, so `helm upgrade` rolls the
	// scheduler, which reads its configuration only at start.
	if len(checksums) != 2 || checksums[0] == "" || checksums[0] == checksums[1] {
		t.Errorf("config checksums %q: want two different ones", checksums)
	}
}

// TestUpgradeRollsOperator checks that a changed operator setting changes the operator's
// Pod template (so `helm upgrade` rolls it) and nothing else's.
func TestUpgradeRollsOperator(t *testing.T) {
	before := podTemplates(t, mustRender(t, nil).Objects)
	after := podTemplates(t, mustRender(t, map[string]any{"operator": map[string]any{"logLevel": "debug"}}, func(o *render.Options) { o.IsUpgrade = true }).Objects)
	for name := range before {
		changed := !cmp.Equal(before[name], after[name])
		if want := name == "Deployment vmafx-system/vmafx-operator"; changed != want {
			t.Errorf("%s: Pod template changed %t, want %t", name, changed, want)
		}
	}
	op := after["Deployment vmafx-system/vmafx-operator"]
	if got := envOf(op.Spec.Containers[0])["VMAFX_LOG_LEVEL"]; got != "debug" {
		t.Errorf("VMAFX_LOG_LEVEL = %q, want debug", got)
	}
}

// TestBatchJobName checks that the batch Job's name follows its settings: the same values
// give the same Job (an upgrade leaves a finished Job alone), other videos a new Job (a
// Job's Pod template cannot change in place).
func TestBatchJobName(t *testing.T) {
	jobName := func(values map[string]any) string {
		t.Helper()
		jobs := ofKind(mustRender(t, values).Objects, "Job")
		if len(jobs) != 1 {
			t.Fatalf("%d Jobs rendered, want 1", len(jobs))
		}
		return jobs[0].GetName()
	}
	base := render.Case{Vendor: vmafxv1.VendorNVIDIA, Batch: true, Operator: true}
	first, again := jobName(base.Values()), jobName(base.Values())
	other := base.Values()
	other["batch"].(map[string]any)["distorted"] = "file:///data/other.y4m"
	if first != again {
		t.Errorf("the same values gave Jobs %s and %s", first, again)
	}
	if second := jobName(other); second == first {
		t.Errorf("other videos gave the same Job %s", first)
	}
	if !strings.HasPrefix(first, "vmafx-score-") || len(first) > 63 {
		t.Errorf("Job name %q: want vmafx-score-<hash>, at most 63 characters", first)
	}
}

func TestBatchJobArgs(t *testing.T) {
	values := render.Case{Vendor: vmafxv1.VendorAMD, Batch: true}.Values()
	b := values["batch"].(map[string]any)
	b["width"], b["height"], b["pixelFormat"], b["model"] = 1920, 1080, "yuv420p10le", "vmaf_v0.6.1neg"
	b["output"], b["extraArgs"], b["gpus"] = "file:///tmp/frames.json", []any{"--threads", "4"}, 2
	res := mustRender(t, values)
	job := decode(t, ofKind(res.Objects, "Job")[0]).(*batchv1.Job)
	worker := job.Spec.Template.Spec.Containers[0]
	want := []string{"score", "--reference", "file:///data/ref.y4m", "--distorted", "file:///data/dist.y4m",
		"--width", "1920", "--height", "1080", "--pixel-format", "yuv420p10le", "--model", "vmaf_v0.6.1neg",
		"--output", "file:///tmp/frames.json", "--threads", "4"}
	if diff := cmp.Diff(want, worker.Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if got := worker.Resources.Limits["amd.com/gpu"]; got.Value() != 2 {
		t.Errorf("amd.com/gpu limit = %s, want 2", got.String())
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range worker.VolumeMounts {
		mounts[m.MountPath] = m
	}
	if m, ok := mounts[vmafxv1.DataMountPath]; !ok || !m.ReadOnly {
		t.Errorf("the data volume is not mounted read-only at %s: %v", vmafxv1.DataMountPath, worker.VolumeMounts)
	}
	if _, ok := mounts["/tmp"]; !ok {
		t.Errorf("no writable /tmp: %v", worker.VolumeMounts)
	}
	if job.Spec.Template.Spec.AutomountServiceAccountToken == nil || *job.Spec.Template.Spec.AutomountServiceAccountToken {
		t.Error("the batch Job mounts a service account token")
	}
}

// TestImages checks image names: the tag defaults to the chart's appVersion, one worker
// image feeds the operator, the device plugin and the batch Job, and imagePullSecrets
// reach every Pod.
func TestImages(t *testing.T) {
	appVersion := loadChart(t).Metadata.AppVersion
	res := mustRender(t, render.Case{Vendor: vmafxv1.VendorCPU, Batch: true, Operator: true}.Values())
	templates := podTemplates(t, res.Objects)
	images := map[string]string{}
	for name, pod := range templates {
		images[name] = pod.Spec.Containers[0].Image
	}
	job := id(ofKind(res.Objects, "Job")[0])
	want := map[string]string{
		"Deployment vmafx-system/vmafx-operator":  "vmafx-operator:" + appVersion,
		"Deployment vmafx-system/vmafx-scheduler": "vmafx-scheduler:" + appVersion,
		devicePluginWorkload:                      "vmafx-device-plugin:" + appVersion,
		job:                                       "vmafx-worker:" + appVersion,
	}
	if diff := cmp.Diff(want, images); diff != "" {
		t.Errorf("images (-want +got):\n%s", diff)
	}
	if got := envOf(templates["Deployment vmafx-system/vmafx-operator"].Spec.Containers[0])["VMAFX_OPERATOR_WORKER_IMAGE"]; got != "vmafx-worker:"+appVersion {
		t.Errorf("operator VMAFX_OPERATOR_WORKER_IMAGE = %q", got)
	}
	if got := envOf(templates[devicePluginWorkload].Spec.Containers[0])["VMAFX_WORKER_IMAGE"]; got != "vmafx-worker:"+appVersion {
		t.Errorf("device plugin VMAFX_WORKER_IMAGE = %q", got)
	}

	values := render.Case{Vendor: vmafxv1.VendorCPU, Batch: true, Operator: true}.Values()
	values["imagePullSecrets"] = []any{map[string]any{"name": "registry"}}
	values["worker"] = map[string]any{"image": map[string]any{"repository": "registry.example/vmafx-worker", "tag": "1.2.3", "pullPolicy": "Always"}}
	for name, pod := range podTemplates(t, mustRender(t, values).Objects) {
		if len(pod.Spec.ImagePullSecrets) != 1 || pod.Spec.ImagePullSecrets[0].Name != "registry" {
			t.Errorf("%s: imagePullSecrets = %v", name, pod.Spec.ImagePullSecrets)
		}
		c := pod.Spec.Containers[0]
		if strings.HasPrefix(name, "Job ") && (c.Image != "registry.example/vmafx-worker:1.2.3" || c.ImagePullPolicy != corev1.PullAlways) {
			t.Errorf("%s: image %s %s", name, c.Image, c.ImagePullPolicy)
		}
	}
}

// TestSettings checks that the component settings in values reach the environment, flags
// and volumes they are documented to set.
func TestSettings(t *testing.T) {
	res := mustRender(t, map[string]any{
		"operator": map[string]any{
			"nodeStaleAfter": "2m", "maxConcurrentReconciles": 32, "kubeAPIQPS": 100, "kubeAPIBurst": 200,
			"gracefulShutdownSeconds": 50, "workerServiceAccount": "scorer",
			"extraEnv": []any{map[string]any{"name": "HTTPS_PROXY", "value": "http://proxy:3128"}},
		},
		"scheduler":    map[string]any{"logLevel": "debug", "extraArgs": []any{"--kube-api-qps=200"}},
		"devicePlugin": map[string]any{"slotsPerDevice": 8, "cdi": true, "kubeletRootDir": "/var/snap/k8s/kubelet/", "logLevel": "warn"},
	})
	templates := podTemplates(t, res.Objects)
	op := templates["Deployment vmafx-system/vmafx-operator"]
	for k, want := range map[string]string{
		"VMAFX_OPERATOR_NODE_STALE_AFTER": "2m", "VMAFX_OPERATOR_MAX_CONCURRENT_RECONCILES": "32",
		"VMAFX_OPERATOR_KUBE_API_QPS": "100", "VMAFX_OPERATOR_KUBE_API_BURST": "200",
		"VMAFX_OPERATOR_GRACEFUL_SHUTDOWN": "50s", "VMAFX_OPERATOR_WORKER_SERVICE_ACCOUNT": "scorer",
		"HTTPS_PROXY": "http://proxy:3128",
	} {
		if got := envOf(op.Spec.Containers[0])[k]; got != want {
			t.Errorf("operator %s = %q, want %q", k, got, want)
		}
	}
	if got := *op.Spec.TerminationGracePeriodSeconds; got != 60 {
		t.Errorf("operator terminationGracePeriodSeconds = %d, want 60 (50 s shutdown + 10 s)", got)
	}
	sched := templates["Deployment vmafx-system/vmafx-scheduler"].Spec.Containers[0]
	if diff := cmp.Diff([]string{"--config=/etc/vmafx-scheduler/config.yaml", "--v=4", "--kube-api-qps=200"}, sched.Args); diff != "" {
		t.Errorf("scheduler args (-want +got):\n%s", diff)
	}
	dp := templates[devicePluginWorkload]
	if got := envOf(dp.Spec.Containers[0]); got["VMAFX_SLOTS_PER_DEVICE"] != "8" || got["VMAFX_CDI"] != "true" {
		t.Errorf("device plugin env = %v", got)
	}
	if diff := cmp.Diff([]string{"-v=0"}, dp.Spec.Containers[0].Args); diff != "" {
		t.Errorf("device plugin args (-want +got):\n%s", diff)
	}
	var paths []string
	for _, v := range dp.Spec.Volumes {
		paths = append(paths, v.HostPath.Path)
	}
	if diff := cmp.Diff([]string{"/var/snap/k8s/kubelet/device-plugins", "/var/snap/k8s/kubelet/pod-resources", "/dev", "/sys", "/run/vmafx/selftest"}, paths); diff != "" {
		t.Errorf("device plugin host paths (-want +got):\n%s", diff)
	}
}

// TestReliabilitySettings checks that the operator's volume allowlist, deadlines and
// time to live reach its environment, and that it reads VmafxNodes of its own namespace.
func TestReliabilitySettings(t *testing.T) {
	op := func(values map[string]any) corev1.Container {
		res := mustRender(t, map[string]any{"operator": values})
		return podTemplates(t, res.Objects)["Deployment vmafx-system/vmafx-operator"].Spec.Containers[0]
	}
	env := envOf(op(map[string]any{}))
	for k, want := range map[string]string{
		"VMAFX_OPERATOR_PENDING_DEADLINE": "0", "VMAFX_OPERATOR_POD_START_TIMEOUT": "10m", "VMAFX_OPERATOR_TERMINATING_TIMEOUT": "2m",
		"VMAFX_OPERATOR_TTL_AFTER_FINISHED": "168h", "VMAFX_OPERATOR_UNHEALTHY_THRESHOLD": "0.55",
	} {
		if env[k] != want {
			t.Errorf("default %s = %q, want %q", k, env[k], want)
		}
	}
	for _, k := range []string{"VMAFX_OPERATOR_ALLOWED_HOST_PATHS", "VMAFX_OPERATOR_ALLOWED_NFS_SERVERS"} {
		if v, ok := env[k]; ok {
			t.Errorf("%s = %q by default; want it unset (nothing allowed)", k, v)
		}
	}
	c := op(map[string]any{"allowedHostPaths": []any{"/srv/clips", "/mnt/media"}, "allowedNFSServers": []any{"nas.local"},
		"pendingDeadline": "15m", "ttlAfterFinished": "never", "unhealthyThreshold": 0.7})
	env = envOf(c)
	for k, want := range map[string]string{
		"VMAFX_OPERATOR_ALLOWED_HOST_PATHS": "/srv/clips,/mnt/media", "VMAFX_OPERATOR_ALLOWED_NFS_SERVERS": "nas.local",
		"VMAFX_OPERATOR_PENDING_DEADLINE": "15m", "VMAFX_OPERATOR_TTL_AFTER_FINISHED": "never", "VMAFX_OPERATOR_UNHEALTHY_THRESHOLD": "0.7",
	} {
		if env[k] != want {
			t.Errorf("%s = %q, want %q", k, env[k], want)
		}
	}
	found := false
	for _, e := range c.Env {
		found = found || (e.Name == "VMAFX_OPERATOR_NAMESPACE" && e.ValueFrom != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace")
	}
	if !found {
		t.Error("VMAFX_OPERATOR_NAMESPACE is not the operator Pod's namespace")
	}
	for _, bad := range []map[string]any{{"allowedHostPaths": []any{"srv/clips"}}, {"ttlAfterFinished": "forever"}, {"unhealthyThreshold": 2}} {
		if _, err := renderValues(t, map[string]any{"operator": bad}); err == nil {
			t.Errorf("operator values %v accepted", bad)
		}
	}
}

// TestWorkerNetworkPolicy checks the worker Pods' egress policy: one per namespace named,
// selecting worker Pods, denying all egress but DNS and the rules given.
func TestWorkerNetworkPolicy(t *testing.T) {
	rule := map[string]any{"to": []any{map[string]any{"ipBlock": map[string]any{"cidr": "10.20.0.0/16"}}},
		"ports": []any{map[string]any{"port": 443, "protocol": "TCP"}}}
	res := mustRender(t, map[string]any{"worker": map[string]any{"networkPolicy": map[string]any{
		"namespaces": []any{"scoring", "default"}, "egress": []any{rule}}}})
	policies := ofKind(res.Objects, "NetworkPolicy")
	if len(policies) != 2 {
		t.Fatalf("%d NetworkPolicies, want one in each of scoring and default", len(policies))
	}
	for _, o := range policies {
		np := decode(t, o).(*networkingv1.NetworkPolicy)
		if np.Spec.PodSelector.MatchLabels["app.kubernetes.io/name"] != "vmafx-worker" || len(np.Spec.PolicyTypes) != 1 ||
			np.Spec.PolicyTypes[0] != networkingv1.PolicyTypeEgress {
			t.Errorf("%s: selector %v, policy types %v", id(o), np.Spec.PodSelector.MatchLabels, np.Spec.PolicyTypes)
		}
		if len(np.Spec.Egress) != 2 || len(np.Spec.Egress[0].To) != 0 || np.Spec.Egress[0].Ports[0].Port.IntValue() != 53 ||
			np.Spec.Egress[1].To[0].IPBlock.CIDR != "10.20.0.0/16" {
			t.Errorf("%s: egress %+v; want DNS, then the given rule", id(o), np.Spec.Egress)
		}
	}
	off := mustRender(t, map[string]any{"worker": map[string]any{"networkPolicy": map[string]any{"enabled": false}}})
	if n := len(ofKind(off.Objects, "NetworkPolicy")); n != 0 {
		t.Errorf("%d NetworkPolicies with worker.networkPolicy.enabled false", n)
	}
}

// TestNotes checks that NOTES.txt tells how to submit a first VmafxJob, for the vendor's
// backend, and where to look; the integration test has the API server accept that job.
func TestNotes(t *testing.T) {
	for _, vendor := range allVendors() {
		t.Run(string(vendor), func(t *testing.T) {
			res := mustRender(t, render.Case{Vendor: vendor, Batch: true, Operator: true}.Values())
			job, err := render.NotesJob(res.Notes)
			if err != nil {
				t.Fatalf("%v\n%s", err, res.Notes)
			}
			if job.Kind != "VmafxJob" || job.Spec.Backend != vendor.NativeBackend() {
				t.Errorf("NOTES.txt job: kind %s, backend %s; want VmafxJob, %s", job.Kind, job.Spec.Backend, vendor.NativeBackend())
			}
			for _, want := range []string{"kubectl get vmafxjobs", "kubectl describe vmafxjob", "logs deploy/vmafx-operator", "logs ds/vmafx-device-plugin", "app.kubernetes.io/name=vmafx-batch"} {
				if !strings.Contains(res.Notes, want) {
					t.Errorf("NOTES.txt does not say %q", want)
				}
			}
		})
	}
	res := mustRender(t, render.Case{Vendor: vmafxv1.VendorCPU}.Values())
	if !strings.Contains(res.Notes, "operator is disabled") || strings.Contains(res.Notes, "kind: VmafxJob") {
		t.Errorf("NOTES.txt without the operator still offers a VmafxJob:\n%s", res.Notes)
	}
}

// TestLocalValues renders manifests/helm/local-values.yaml, the values of the local
// cluster (docs/local-cluster.md), and checks that they name the images `make images`
// imports and never pull them, as manifests/overlays/local does.
func TestLocalValues(t *testing.T) {
	values, err := render.ReadValues(render.LocalValuesFile())
	if err != nil {
		t.Fatal(err)
	}
	res := mustRender(t, values)
	for name, pod := range podTemplates(t, res.Objects) {
		c := pod.Spec.Containers[0]
		if !strings.HasPrefix(c.Image, "vmafx.local/") || !strings.HasSuffix(c.Image, ":dev") || c.ImagePullPolicy != corev1.PullNever {
			t.Errorf("%s: image %s, pull policy %s; want vmafx.local/<name>:dev, Never", name, c.Image, c.ImagePullPolicy)
		}
	}
	op := podTemplates(t, res.Objects)["Deployment vmafx-system/vmafx-operator"].Spec.Containers[0]
	if env := envOf(op); env["VMAFX_OPERATOR_WORKER_IMAGE"] != "vmafx.local/vmafx-worker:dev" || env["VMAFX_OPERATOR_WORKER_PULL_POLICY"] != "Never" ||
		env["VMAFX_OPERATOR_TRAINER_IMAGE"] != "vmafx.local/vmafx-trainer:dev" || env["VMAFX_OPERATOR_TRAINER_PULL_POLICY"] != "Never" ||
		env["VMAFX_OPERATOR_ALLOWED_HOST_PATHS"] != "/" {
		t.Errorf("operator worker image settings: %v", env)
	}
}
