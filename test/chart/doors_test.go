package chart_test

import (
	"fmt"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	render "github.com/vmafx/vmafx/internal/chartrender"
)

// TestBatchJobPushesToThePushgateway: with the subchart on, the batch Job pushes to its
// Service; batch.pushGateway names another; without either it pushes nowhere.
func TestBatchJobPushesToThePushgateway(t *testing.T) {
	pushEnv := func(values map[string]any) map[string]string {
		t.Helper()
		res := mustRender(t, values)
		job := decode(t, ofKind(res.Objects, "Job")[0]).(*batchv1.Job)
		env := map[string]string{}
		for _, e := range job.Spec.Template.Spec.Containers[0].Env {
			if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
				env[e.Name] = "field:" + e.ValueFrom.FieldRef.FieldPath
				continue
			}
			env[e.Name] = e.Value
		}
		return env
	}
	on := render.Case{Vendor: vmafxv1.VendorCPU, Workloads: []string{"job"}, Pushgateway: true}.Values()
	env := pushEnv(on)
	if env["VMAFX_PUSH_GATEWAY"] != "http://vmafx-pushgateway.vmafx-system.svc:9091" || env["VMAFX_PUSH_JOB"] != "field:metadata.labels['batch.kubernetes.io/job-name']" {
		t.Errorf("with the subchart: %v", env)
	}
	res := mustRender(t, on)
	svc := find(res.Objects, "Service", "vmafx-pushgateway")
	if svc == nil || find(res.Objects, "Deployment", "vmafx-pushgateway") == nil {
		t.Fatal("the Pushgateway's Deployment or Service is missing")
	}
	if port := decode(t, svc).(*corev1.Service).Spec.Ports[0].Port; port != 9091 {
		t.Errorf("Service port %d, want 9091", port)
	}

	other := render.Case{Vendor: vmafxv1.VendorCPU, Workloads: []string{"job"}}.Values()
	other["batch"].(map[string]any)["pushGateway"] = "http://pushgateway.monitoring.svc:9091"
	if env := pushEnv(other); env["VMAFX_PUSH_GATEWAY"] != "http://pushgateway.monitoring.svc:9091" {
		t.Errorf("with batch.pushGateway: %v", env)
	}
	if env := pushEnv(render.Case{Vendor: vmafxv1.VendorCPU, Workloads: []string{"job"}}.Values()); env["VMAFX_PUSH_GATEWAY"] != "" {
		t.Errorf("without a Pushgateway the Job pushes to %q", env["VMAFX_PUSH_GATEWAY"])
	}
}

// TestDoors checks the front doors' workloads: the server rolls without losing capacity
// behind a PodDisruptionBudget, the MCP server is a StatefulSet named by its headless
// Service, TLS comes from the Secret, and both use their own ServiceAccounts.
func TestDoors(t *testing.T) {
	values := render.Case{Vendor: vmafxv1.VendorCPU, Workloads: []string{"server", "mcp"}}.Values()
	values["server"] = map[string]any{"tls": map[string]any{"secretName": "api-tls"}, "replicaCount": 3}
	res := mustRender(t, values)

	api := decode(t, find(res.Objects, "Deployment", "vmafx-api")).(*appsv1.Deployment)
	if *api.Spec.Replicas != 3 || api.Spec.Strategy.RollingUpdate.MaxUnavailable.IntValue() != 0 {
		t.Errorf("vmafx-api: replicas %d, maxUnavailable %v", *api.Spec.Replicas, api.Spec.Strategy.RollingUpdate.MaxUnavailable)
	}
	pod := api.Spec.Template.Spec
	env := envOf(pod.Containers[0])
	if env["VMAFX_API_TLS_CERT_FILE"] != "/etc/vmafx/tls/tls.crt" || pod.Volumes[0].Secret.SecretName != "api-tls" || pod.ServiceAccountName != "vmafx-api" {
		t.Errorf("vmafx-api TLS or service account: env %v, volumes %v, sa %s", env, pod.Volumes, pod.ServiceAccountName)
	}
	if pdb := find(res.Objects, "PodDisruptionBudget", "vmafx-api"); pdb == nil || decode(t, pdb).(*policyv1.PodDisruptionBudget).Spec.MaxUnavailable.IntValue() != 1 {
		t.Error("no PodDisruptionBudget allowing one vmafx-api replica down")
	}
	if svc := decode(t, find(res.Objects, "Service", "vmafx-api")).(*corev1.Service); svc.Spec.Ports[0].Name != "https" {
		t.Errorf("vmafx-api Service ports %v, want https", svc.Spec.Ports)
	}

	mcp := decode(t, find(res.Objects, "StatefulSet", "vmafx-mcp")).(*appsv1.StatefulSet)
	headless := decode(t, find(res.Objects, "Service", "vmafx-mcp")).(*corev1.Service)
	if mcp.Spec.ServiceName != "vmafx-mcp" || headless.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("vmafx-mcp: serviceName %q, Service clusterIP %q", mcp.Spec.ServiceName, headless.Spec.ClusterIP)
	}
	if envOf(mcp.Spec.Template.Spec.Containers[0])["VMAFX_MCP_ADDR"] != ":8080" || mcp.Spec.Template.Spec.ServiceAccountName != "vmafx-mcp" {
		t.Errorf("vmafx-mcp container: %v", mcp.Spec.Template.Spec.Containers[0].Env)
	}
	for _, b := range []string{"vmafx-api-access", "vmafx-api-jobs", "vmafx-mcp-access", "vmafx-mcp-jobs", "vmafx-mcp-mcp"} {
		if find(res.Objects, "ClusterRoleBinding", b) == nil {
			t.Errorf("ClusterRoleBinding %s missing", b)
		}
	}
	if find(res.Objects, "ClusterRoleBinding", "vmafx-api-mcp") != nil {
		t.Error("the HTTP API may read CRDs, which only the MCP server needs")
	}
	// The doors act as their caller: they may impersonate, and touch no VmafxJob,
	// Secret or volume of their own.
	for _, name := range []string{"vmafx-gateway-access", "vmafx-gateway-jobs", "vmafx-gateway-mcp"} {
		o := find(res.Objects, "ClusterRole", name)
		if o == nil {
			t.Errorf("ClusterRole %s missing", name)
			continue
		}
		for _, r := range decode(t, o).(*rbacv1.ClusterRole).Rules {
			for _, g := range r.APIGroups {
				if g == vmafxv1.GroupVersion.Group || (g == "" && !slices.Equal(r.Verbs, []string{"impersonate"})) {
					t.Errorf("ClusterRole %s grants %v on %s %v; the doors act as their caller", name, r.Verbs, g, r.Resources)
				}
			}
		}
	}
	env = envOf(mcp.Spec.Template.Spec.Containers[0])
	if env["VMAFX_MCP_MAX_SESSIONS_PER_USER"] != "10" || env["VMAFX_MCP_MAX_SESSIONS"] != "1000" || env["VMAFX_MCP_SESSION_IDLE_TIMEOUT"] != "5m" {
		t.Errorf("vmafx-mcp session limits: %v", env)
	}
}

// vmafx-mcp reads outputs for worst_frames' pictures only when asked, and then has the
// in-memory /tmp the door lays a job's Secret out in, as vmafx-api's console does.
func TestMCPReadOutputs(t *testing.T) {
	for _, read := range []bool{false, true} {
		values := render.Case{Vendor: vmafxv1.VendorCPU, Workloads: []string{"mcp"}}.Values()
		values["mcp"] = map[string]any{"readOutputs": read}
		mcp := decode(t, find(mustRender(t, values).Objects, "StatefulSet", "vmafx-mcp")).(*appsv1.StatefulSet)
		pod := mcp.Spec.Template.Spec
		if got := envOf(pod.Containers[0])["VMAFX_MCP_READ_OUTPUTS"]; got != fmt.Sprint(read) {
			t.Errorf("readOutputs %v: VMAFX_MCP_READ_OUTPUTS %q", read, got)
		}
		tmp := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool {
			return v.Name == "tmp" && v.EmptyDir != nil && v.EmptyDir.Medium == corev1.StorageMediumMemory
		})
		mounted := slices.ContainsFunc(pod.Containers[0].VolumeMounts, func(m corev1.VolumeMount) bool {
			return m.Name == "tmp" && m.MountPath == "/tmp"
		})
		if (tmp >= 0) != read || mounted != read {
			t.Errorf("readOutputs %v: in-memory /tmp volume %v, mounted %v", read, tmp >= 0, mounted)
		}
	}
}
