// Package integration runs kubectl-vmafx's commands against a real kube-apiserver and
// etcd, through a kubeconfig file as a user would. No operator runs: the tests write the
// job status that the operator would (finish), and a VmafxNode's status as the device
// plugin and operator would.
package integration

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/kubectl-vmafx/internal/cli"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

func TestMain(m *testing.M) { testenv.Run(m) }

// kubeconfig writes a kubeconfig of the test apiserver with two contexts: "admin" (the
// current one, namespace default) and "team" (namespace ns).
func kubeconfig(t *testing.T, ns string) string {
	t.Helper()
	cfg := testenv.Config()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["admin"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "admin"}
	kc.Contexts["team"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "admin", Namespace: ns}
	kc.CurrentContext = "admin"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// run runs `kubectl vmafx args...` and returns its stdout.
func run(t *testing.T, kc string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := cli.New(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	cmd.SetArgs(append([]string{"--kubeconfig", kc}, args...))
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func mustRun(t *testing.T, kc string, args ...string) string {
	t.Helper()
	out, err := run(t, kc, args...)
	if err != nil {
		t.Fatalf("kubectl vmafx %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// finish writes the status the operator writes for a finished job.
func finish(t *testing.T, ns, name string, phase vmafxv1.JobPhase, score, message string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		j := &vmafxv1.VmafxJob{}
		if err := testenv.Client().Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
			return false, nil
		}
		j.Status = vmafxv1.VmafxJobStatus{Phase: phase, Score: score, Node: "node-a", Attempts: 1, Message: message}
		return testenv.Client().Status().Update(ctx, j) == nil, nil
	})
	if err != nil {
		t.Fatalf("finishing %s: %v", name, err)
	}
}

func TestScoreGetWaitCancel(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	kc := kubeconfig(t, ns)
	ref, dist := "https://media.example.com/ref.y4m", "https://media.example.com/dist.y4m"

	// --context picks the namespace of the team context; -n overrides it.
	if out := mustRun(t, kc, "--context", "team", "score", ref, dist, "--name", "first"); out != "vmafxjob.vmafx.dev/first created\n" {
		t.Errorf("score: %q", out)
	}
	out := mustRun(t, kc, "-n", ns, "get", "first", "-o", "json")
	var j vmafxv1.VmafxJob
	if err := yaml.Unmarshal([]byte(out), &j); err != nil || j.Spec.Model != vmafxv1.DefaultModel || j.Kind != "VmafxJob" {
		t.Errorf("get -o json: %v %s, want the job with the API's default model", err, out)
	}

	// --auto-align asks for spec.alignment.auto, with its window; a window alone is refused.
	mustRun(t, kc, "-n", ns, "score", ref, dist, "--name", "aligned", "--auto-align", "--auto-align-window", "12")
	out = mustRun(t, kc, "-n", ns, "get", "aligned", "-o", "json")
	var aligned vmafxv1.VmafxJob
	if err := yaml.Unmarshal([]byte(out), &aligned); err != nil || aligned.Spec.Alignment == nil || !aligned.Spec.Alignment.Auto || aligned.Spec.Alignment.Window != 12 {
		t.Errorf("score --auto-align: %v, alignment %+v", err, aligned.Spec.Alignment)
	}
	if _, err := run(t, kc, "-n", ns, "score", ref, dist, "--auto-align-window", "12"); err == nil || !strings.Contains(err.Error(), "give --auto-align too") {
		t.Errorf("--auto-align-window alone: %v", err)
	}

	// score --wait returns once the job has its score.
	type result struct {
		out string
		err error
	}
	got := make(chan result, 1)
	go func() {
		var o, e bytes.Buffer
		cmd := cli.New(genericiooptions.IOStreams{Out: &o, ErrOut: &e})
		cmd.SetArgs([]string{"--kubeconfig", kc, "-n", ns, "score", ref, dist, "--name", "waited", "--wait", "--timeout", "60s"})
		err := cmd.Execute()
		got <- result{o.String(), err}
	}()
	finish(t, ns, "waited", vmafxv1.JobSucceeded, "90.500000", "")
	select {
	case r := <-got:
		if r.err != nil || !lineHas(r.out, "waited", "Succeeded", "90.500000", "node-a") {
			t.Errorf("score --wait: %v\n%s", r.err, r.out)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("score --wait did not return once the job succeeded")
	}

	out = mustRun(t, kc, "-n", ns, "get", "-o", "wide")
	if !strings.Contains(out, "ATTEMPTS") || !lineHas(out, "first", "auto", ref) || !lineHas(out, "waited", "Succeeded") {
		t.Errorf("get -o wide:\n%s", out)
	}
	out = mustRun(t, kc, "-n", ns, "get", "first", "waited", "-o", "yaml")
	if !strings.Contains(out, "kind: List") || strings.Count(out, "kind: VmafxJob") != 2 {
		t.Errorf("get of two jobs -o yaml:\n%s", out)
	}

	// wait on a failed job fails, with the job's message.
	mustRun(t, kc, "-n", ns, "score", ref, dist, "--name", "broken")
	finish(t, ns, "broken", vmafxv1.JobFailed, "", "BadInput: the reference is not a video")
	if out, err := run(t, kc, "-n", ns, "wait", "broken"); err == nil || !strings.Contains(err.Error(), "the reference is not a video") || !lineHas(out, "broken", "Failed") {
		t.Errorf("wait on a failed job: %v\n%s", err, out)
	}
	if _, err := run(t, kc, "-n", ns, "wait", "first", "--timeout", "300ms"); err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("wait on a pending job with a short timeout: %v", err)
	}
	if _, err := run(t, kc, "-n", ns, "logs", "first"); err == nil || !strings.Contains(err.Error(), "has no worker Pod yet") {
		t.Errorf("logs of a job without a Pod: %v", err)
	}

	if out := mustRun(t, kc, "-n", ns, "cancel", "first"); out != "vmafxjob.vmafx.dev/first cancelled\n" {
		t.Errorf("cancel: %q", out)
	}
	err := testenv.Client().Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "first"}, &vmafxv1.VmafxJob{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("after cancel: %v, want NotFound", err)
	}
}

func TestScoreRefusedByTheAPIServer(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	kc := kubeconfig(t, ns)
	_, err := run(t, kc, "-n", ns, "score", "s3://bucket/ref.yuv", "s3://bucket/dist.yuv")
	if err == nil || !strings.Contains(err.Error(), "width is required for raw YUV inputs") {
		t.Errorf("raw YUV without width: %v, want the CEL rule's message", err)
	}
	if _, err := run(t, kc, "-n", ns, "get", "-o", "table"); err == nil {
		t.Error("-o table accepted")
	}
}

func TestNodes(t *testing.T) {
	ctx := context.Background()
	c := testenv.Client()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: vmafxv1.SystemNamespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	node := &vmafxv1.VmafxNode{ObjectMeta: metav1.ObjectMeta{Namespace: vmafxv1.SystemNamespace, Name: "gpu-1"},
		Spec: vmafxv1.VmafxNodeSpec{NodeName: "gpu-1", GPUVendor: "nvidia", Capacity: 8}}
	if err := c.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, node) })
	node.Status = vmafxv1.VmafxNodeStatus{Healthy: true,
		Device: "nvidia-0", Jobs: 3, Slots: &vmafxv1.SlotCounts{Total: 8, Healthy: 8, Allocated: 3}}
	if err := c.Status().Update(ctx, node); err != nil {
		t.Fatal(err)
	}
	kc := kubeconfig(t, "default")
	// NAME VENDOR HEALTHY SLOTS USED FREE HEARTBEAT
	if out := mustRun(t, kc, "nodes"); !lineHas(out, "gpu-1", "nvidia", "true", "8", "3", "5", "never") {
		t.Errorf("nodes before any heartbeat:\n%s", out)
	}
	// The heartbeat is the node's Lease, renewed 30 s ago.
	holder := "gpu-1"
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: vmafxv1.SystemNamespace, Name: "vmafx-node-gpu-1",
		Labels: map[string]string{vmafxv1.LabelComponent: vmafxv1.ComponentNodeHeartbeat}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, RenewTime: &metav1.MicroTime{Time: time.Now().Add(-30 * time.Second)}}}
	if err := c.Create(ctx, lease); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, lease) })
	out := mustRun(t, kc, "nodes")
	if !lineHas(out, "gpu-1", "nvidia", "true", "8", "3", "5", "3", "s ago") {
		t.Errorf("nodes:\n%s", out)
	}
	out = mustRun(t, kc, "nodes", "-o", "wide")
	if !lineHas(out, "gpu-1", "nvidia-0") {
		t.Errorf("nodes -o wide:\n%s", out)
	}
}

// lineHas reports whether one line of out has all fields, in order.
func lineHas(out string, fields ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		rest, ok := line, true
		for _, f := range fields {
			i := strings.Index(rest, f)
			if i < 0 {
				ok = false
				break
			}
			rest = rest[i+len(f):]
		}
		if ok {
			return true
		}
	}
	return false
}
