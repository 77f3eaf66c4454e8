package scenarios

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

var devicePluginKey = types.NamespacedName{Namespace: vmafxv1.SystemNamespace, Name: "vmafx-device-plugin"}

// changeDevicePlugin changes the device plugin DaemonSet's Pod template and waits for
// the change to roll out. The returned function (also run at cleanup) puts the original
// template back and waits for that to roll out; calling it twice is harmless.
func changeDevicePlugin(t *testing.T, change func(*corev1.PodSpec)) (restore func()) {
	t.Helper()
	var ds appsv1.DaemonSet
	if err := c.Get(t.Context(), devicePluginKey, &ds); err != nil {
		t.Fatal(err)
	}
	original := ds.Spec.Template.DeepCopy()
	update := func(ctx context.Context, set func(*appsv1.DaemonSet)) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var cur appsv1.DaemonSet
			if err := c.Get(ctx, devicePluginKey, &cur); err != nil {
				return err
			}
			set(&cur)
			return c.Update(ctx, &cur)
		})
	}
	if err := update(t.Context(), func(d *appsv1.DaemonSet) { change(&d.Spec.Template.Spec) }); err != nil {
		t.Fatal(err)
	}
	restored := false
	restore = func() {
		if restored {
			return
		}
		restored = true
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := update(ctx, func(d *appsv1.DaemonSet) { d.Spec.Template = *original.DeepCopy() }); err != nil {
			t.Errorf("restoring the device plugin DaemonSet: %v", err)
			return
		}
		waitDevicePluginRolledOut(t, true)
	}
	t.Cleanup(restore)
	return restore
}

// waitDevicePluginRolledOut waits until the DaemonSet's current template runs (running:
// its one Pod is updated and ready) or no Pod runs (running false: a nodeSelector
// matches no node).
func waitDevicePluginRolledOut(t *testing.T, running bool) {
	t.Helper()
	eventually(t, 2*time.Minute, "device plugin DaemonSet rolled out", func(ctx context.Context) error {
		var ds appsv1.DaemonSet
		if err := c.Get(ctx, devicePluginKey, &ds); err != nil {
			return err
		}
		st := ds.Status
		if st.ObservedGeneration < ds.Generation {
			return fmt.Errorf("generation %d not observed yet", ds.Generation)
		}
		want := int32(0)
		if running {
			want = 1
		}
		if st.DesiredNumberScheduled != want || st.UpdatedNumberScheduled != want || st.NumberReady != want || st.CurrentNumberScheduled != want {
			return fmt.Errorf("desired %d, updated %d, ready %d, current %d; want %d", st.DesiredNumberScheduled, st.UpdatedNumberScheduled, st.NumberReady, st.CurrentNumberScheduled, want)
		}
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(vmafxv1.SystemNamespace), client.MatchingLabels{"app.kubernetes.io/name": "vmafx-device-plugin"}); err != nil {
			return err
		}
		if n := len(pods.Items); n != int(want) {
			return fmt.Errorf("%d device plugin Pods, want %d", n, want)
		}
		return nil
	})
}

// allocatableSlots is the node's allocatable vmafx.dev/slot.
func allocatableSlots(ctx context.Context) (int64, error) {
	var n corev1.Node
	if err := c.Get(ctx, types.NamespacedName{Name: nodeName}, &n); err != nil {
		return 0, err
	}
	q := n.Status.Allocatable[vmafxv1.ResourceSlot]
	return q.Value(), nil
}

// workerPod returns the job's current worker Pod.
func workerPod(ctx context.Context, ns, job string) (*corev1.Pod, error) {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{vmafxv1.LabelJob: vmafxv1.JobLabelValue(job)}); err != nil {
		return nil, err
	}
	if len(pods.Items) == 0 {
		return nil, fmt.Errorf("no worker Pod for job %s yet", job)
	}
	return &pods.Items[len(pods.Items)-1], nil
}

// schedulingFailure returns the note of the latest FailedScheduling event of a Pod.
func schedulingFailure(ctx context.Context, pod *corev1.Pod) (string, error) {
	var events eventsv1.EventList
	if err := c.List(ctx, &events, client.InNamespace(pod.Namespace)); err != nil {
		return "", err
	}
	note := ""
	var at time.Time
	for _, e := range events.Items {
		if e.Regarding.UID != pod.UID || e.Reason != "FailedScheduling" || e.ReportingController != vmafxv1.SchedulerName {
			continue
		}
		t := e.EventTime.Time
		if e.Series != nil {
			t = e.Series.LastObservedTime.Time
		}
		if note == "" || t.After(at) {
			note, at = e.Note, t
		}
	}
	if note == "" {
		return "", fmt.Errorf("no FailedScheduling event from %s for Pod %s", vmafxv1.SchedulerName, pod.Name)
	}
	return note, nil
}

// kubectlInput runs kubectl with stdin and returns its combined output and error,
// for commands that are expected to fail.
func kubectlInput(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	bin := os.Getenv(envKubectl)
	if bin == "" {
		bin = "kubectl"
	}
	cmd := exec.CommandContext(t.Context(), bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// serviceAddress returns host:port of Service ns/name's ClusterIP (the cluster has no DNS)
// once a connection from this machine gets through. kube-proxy translates a new Service
// only a moment after its endpoints are ready; until then the cluster's guard refuses the
// connection (it would otherwise leave by the default route).
func serviceAddress(t *testing.T, ns, name string, port int) string {
	t.Helper()
	var svc corev1.Service
	if err := c.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: name}, &svc); err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(port))
	eventually(t, time.Minute, "Service "+ns+"/"+name+" reachable at "+addr, func(ctx context.Context) error {
		conn, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		return conn.Close()
	})
	return addr
}
