package kueue_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/testutil"
	"github.com/vmafx/vmafx/test/integration/testenv"
)

// applyExample creates the objects of docs/examples/kueue/queues.yaml, with the
// ClusterQueue's quota set to quota and the LocalQueue in ns.
func applyExample(t *testing.T, ns string, quota int) {
	t.Helper()
	f, err := os.Open(filepath.Join(testenv.RepoRoot(), "docs/examples/kueue/queues.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		var obj unstructured.Unstructured
		if err := dec.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return
		} else if err != nil {
			t.Fatal(err)
		}
		switch obj.GetKind() {
		case "ClusterQueue":
			groups, _, _ := unstructured.NestedSlice(obj.Object, "spec", "resourceGroups")
			flavor := groups[0].(map[string]any)["flavors"].([]any)[0].(map[string]any)
			for _, r := range flavor["resources"].([]any) {
				if r := r.(map[string]any); r["name"] == vmafxv1.ResourceSlot {
					r["nominalQuota"] = int64(quota)
				}
			}
			if err := unstructured.SetNestedSlice(obj.Object, groups, "spec", "resourceGroups"); err != nil {
				t.Fatal(err)
			}
		case "LocalQueue":
			obj.SetNamespace(ns)
		}
		if err := testenv.Client().Create(context.Background(), &obj); err != nil {
			t.Fatalf("creating %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
		t.Cleanup(func() { _ = testenv.Client().Delete(context.Background(), &obj) })
	}
}

// workloads sums up Kueue's Workloads of ns: each one's conditions, for a failure message.
func workloads(t *testing.T, ns string) string {
	t.Helper()
	var list unstructured.UnstructuredList
	list.SetAPIVersion("kueue.x-k8s.io/v1beta2")
	list.SetKind("WorkloadList")
	if err := testenv.Client().List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		return err.Error()
	}
	var out []string
	for _, w := range list.Items {
		conds, _, _ := unstructured.NestedSlice(w.Object, "status", "conditions")
		var cs []string
		for _, c := range conds {
			m, _ := c.(map[string]any)
			cs = append(cs, fmt.Sprintf("%v=%v (%v: %v)", m["type"], m["status"], m["reason"], m["message"]))
		}
		out = append(out, w.GetName()+": "+strings.Join(cs, "; "))
	}
	return strings.Join(out, " | ")
}

func gated(pod *corev1.Pod) bool {
	return slices.ContainsFunc(pod.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == vmafxv1.KueueAdmissionGate })
}

func getJob(t *testing.T, ns, name string) *vmafxv1.VmafxJob {
	t.Helper()
	var j vmafxv1.VmafxJob
	if err := testenv.Client().Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &j); err != nil {
		t.Fatal(err)
	}
	return &j
}

func condition(j *vmafxv1.VmafxJob, typ string) *metav1.Condition {
	for i := range j.Status.Conditions {
		if j.Status.Conditions[i].Type == typ {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}

// workerPods lists the worker Pods of ns by job.
func workerPods(t *testing.T, ns string) map[string]*corev1.Pod {
	t.Helper()
	var list corev1.PodList
	if err := testenv.Client().List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	pods := map[string]*corev1.Pod{}
	for i := range list.Items {
		pods[list.Items[i].Labels[vmafxv1.LabelJob]] = &list.Items[i]
	}
	return pods
}

// finish plays vmafx-scheduler and the kubelet for an admitted Pod: it is bound and ends
// Succeeded with a worker's result.
func finish(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	ctx := context.Background()
	c := testenv.Client()
	binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name},
		Target: corev1.ObjectReference{Kind: "Node", Name: "node-a"}}
	if err := c.SubResource("binding").Create(ctx, pod, binding); err != nil {
		t.Fatalf("binding %s: %v", pod.Name, err)
	}
	result, _ := json.Marshal(vmafxv1.WorkerResult{Version: vmafxv1.ResultVersion, Score: 91, HarmonicMean: 90.5, Min: 88, Max: 93,
		Frames: 10, FPS: 50, WallSeconds: 0.2, Backend: "cpu", Model: "vmaf_v0.6.1"})
	testutil.Eventually(t, 10*time.Second, "Pod "+pod.Name+" Succeeded", func(ctx context.Context) error {
		fresh := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), fresh); err != nil {
			return err
		}
		now := metav1.Now()
		fresh.Status.Phase, fresh.Status.StartTime = corev1.PodSucceeded, &now
		fresh.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "worker", Image: "vmafx-worker:test", ImageID: "x",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed", Message: string(result), StartedAt: now, FinishedAt: now}}}}
		return c.Status().Update(ctx, fresh)
	})
}

// TestKueueAdmitsWorkerPods: with Kueue's plain-Pod integration and a ClusterQueue of 2
// slots, three jobs' worker Pods are created gated; Kueue admits two and keeps the third
// gated until one of them finishes. Meanwhile the operator neither retries nor fails the
// gated job: it stays Pending with one attempt, saying it is queued.
func TestKueueAdmitsWorkerPods(t *testing.T) {
	ns := testenv.CreateNamespace(t)
	kubeconfig := adminKubeconfig(t)
	startKueue(t, kubeconfig)
	applyExample(t, ns, 2)
	startOperator(t, kubeconfig, "vmafx")

	jobs := []string{"first", "second", "third"}
	for _, name := range jobs {
		j := &vmafxv1.VmafxJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: vmafxv1.VmafxJobSpec{Reference: "https://media.example.com/ref.y4m", Distorted: "https://media.example.com/dist.y4m"}}
		if err := testenv.Client().Create(context.Background(), j); err != nil {
			t.Fatal(err)
		}
	}

	// Every worker Pod reaches Kueue with the queue's label and gets its gate; two are
	// admitted (the gate lifted), the third waits.
	var admitted, waiting []*corev1.Pod
	testutil.Eventually(t, time.Minute, "two of three worker Pods admitted", func(context.Context) error {
		pods := workerPods(t, ns)
		admitted, waiting = nil, nil
		for _, name := range jobs {
			p := pods[name]
			if p == nil {
				return fmt.Errorf("job %s has no worker Pod", name)
			}
			if q := p.Labels[vmafxv1.LabelKueueQueueName]; q != "vmafx" {
				return fmt.Errorf("Pod %s: queue label %q, want vmafx", p.Name, q)
			}
			if gated(p) {
				waiting = append(waiting, p)
			} else {
				admitted = append(admitted, p)
			}
		}
		if len(admitted) != 2 || len(waiting) != 1 {
			return fmt.Errorf("%d admitted, %d gated; Kueue's workloads: %s", len(admitted), len(waiting), workloads(t, ns))
		}
		return nil
	})
	queued := waiting[0]
	queuedJob := queued.Labels[vmafxv1.LabelJob]

	// The operator follows the gated Pod: the job is Pending, queued, on its first attempt.
	testutil.Eventually(t, 30*time.Second, "job "+queuedJob+" says it is queued", func(context.Context) error {
		j := getJob(t, ns, queuedJob)
		c := condition(j, vmafxv1.JobScheduled)
		if j.Status.Phase != vmafxv1.JobPending || c == nil || c.Reason != corev1.PodReasonSchedulingGated || !strings.Contains(c.Message, "queued in Kueue's LocalQueue vmafx") {
			return fmt.Errorf("phase %s, Scheduled %+v", j.Status.Phase, c)
		}
		return nil
	})
	testutil.Consistently(t, 3*time.Second, "the gated job neither retries nor fails", func(context.Context) error {
		j := getJob(t, ns, queuedJob)
		pods := workerPods(t, ns)
		if j.Status.Phase != vmafxv1.JobPending || j.Status.Attempts != 1 || j.Status.FailedAttempts != 0 || j.Status.LostAttempts != 0 {
			return fmt.Errorf("phase %s, attempts %d, failed %d, lost %d", j.Status.Phase, j.Status.Attempts, j.Status.FailedAttempts, j.Status.LostAttempts)
		}
		if p := pods[queuedJob]; p == nil || p.UID != queued.UID || !gated(p) {
			return fmt.Errorf("the gated Pod was replaced or ungated: %v", p)
		}
		return nil
	})
	t.Logf("job %s while gated: %s", queuedJob, condition(getJob(t, ns, queuedJob), vmafxv1.JobScheduled).Message)

	// One admitted Pod finishes: its job succeeds, its quota frees, and Kueue admits the
	// waiting Pod, which the job follows to the scheduler.
	finish(t, admitted[0])
	done := admitted[0].Labels[vmafxv1.LabelJob]
	testutil.Eventually(t, 30*time.Second, "job "+done+" Succeeded", func(context.Context) error {
		if j := getJob(t, ns, done); j.Status.Phase != vmafxv1.JobSucceeded {
			return fmt.Errorf("phase %s", j.Status.Phase)
		}
		return nil
	})
	testutil.Eventually(t, time.Minute, "the queued Pod admitted", func(context.Context) error {
		p := workerPods(t, ns)[queuedJob]
		if p == nil || p.UID != queued.UID {
			return fmt.Errorf("the queued Pod was replaced: %v", p)
		}
		if gated(p) {
			return errors.New("still gated")
		}
		j := getJob(t, ns, queuedJob)
		if c := condition(j, vmafxv1.JobScheduled); c == nil || c.Reason == corev1.PodReasonSchedulingGated || j.Status.Attempts != 1 {
			return fmt.Errorf("job: Scheduled %+v, attempts %d", c, j.Status.Attempts)
		}
		return nil
	})
	if p := workerPods(t, ns)[admitted[1].Labels[vmafxv1.LabelJob]]; p == nil || gated(p) {
		t.Errorf("the other admitted Pod is gone or gated again: %v", p)
	}
}
