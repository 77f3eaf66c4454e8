package deviceplugin_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"
	"k8s.io/kubernetes/pkg/kubelet/apis/podresources"
	"k8s.io/kubernetes/pkg/kubelet/cm/containermap"
	"k8s.io/kubernetes/pkg/kubelet/cm/devicemanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/config"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// kubelet is the kubelet's own device manager, run in-process, with the pods it
// treats as active.
type kubelet struct {
	t      *testing.T
	logger klog.Logger
	m      *devicemanager.ManagerImpl
	pods   *podList
}

// podList is the kubelet's active pods.
type podList struct {
	mu   sync.Mutex
	pods []*v1.Pod
}

func (p *podList) add(pod *v1.Pod) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pods = append(p.pods, pod)
}

func (p *podList) active() []*v1.Pod {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.pods)
}

// startKubelet starts a device manager on /var/lib/kubelet/device-plugins (this test
// binary's private tmpfs) and stops it when the test ends.
func startKubelet(t *testing.T, pods *podList) *kubelet {
	t.Helper()
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(2)))
	if pods == nil {
		pods = &podList{}
	}
	m, err := devicemanager.NewManagerImpl(logger, nil, topologymanager.NewFakeManager(logger))
	if err != nil {
		t.Fatalf("device manager: %v", err)
	}
	ready := config.NewSourcesReady(func(sets.Set[string]) bool { return true })
	if err := m.Start(logger, pods.active, ready, containermap.NewContainerMap(), sets.New[string]()); err != nil {
		t.Fatalf("starting the device manager: %v", err)
	}
	k := &kubelet{t: t, logger: logger, m: m, pods: pods}
	t.Cleanup(k.stop)
	return k
}

func (k *kubelet) stop() {
	if k.m != nil {
		_ = k.m.Stop(k.logger)
		k.m = nil
	}
}

// slots returns vmafx.dev/slot capacity and allocatable as the kubelet would put them
// in the Node status.
func (k *kubelet) slots() (capacity, allocatable int64) {
	c, a, _ := k.m.GetCapacity(k.logger)
	name := v1.ResourceName(vmafxv1.ResourceSlot)
	cq, aq := c[name], a[name]
	return cq.Value(), aq.Value()
}

// waitSlots waits until capacity and allocatable are as wanted and returns how long
// that took.
func (k *kubelet) waitSlots(capacity, allocatable int64) time.Duration {
	k.t.Helper()
	start := time.Now()
	var c, a int64
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		c, a = k.slots()
		return c == capacity && a == allocatable, nil
	})
	if err != nil {
		k.t.Fatalf("vmafx.dev/slot capacity/allocatable = %d/%d, want %d/%d", c, a, capacity, allocatable)
	}
	return time.Since(start)
}

// workerPod is a worker Pod asking for n slots.
func workerPod(name string, n int64) *v1.Pod {
	q := *resource.NewQuantity(n, resource.DecimalSI)
	res := v1.ResourceList{v1.ResourceName(vmafxv1.ResourceSlot): q}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: uuid.NewUUID()},
		Spec: v1.PodSpec{Containers: []v1.Container{{
			Name: "worker", Image: "vmafx-worker:dev",
			Resources: v1.ResourceRequirements{Limits: res, Requests: res},
		}}},
	}
}

// allocate admits pod the way the kubelet does before starting its container, and
// returns what the container runtime would be told: env, device nodes, CDI devices.
func (k *kubelet) allocate(pod *v1.Pod) *devicemanager.DeviceRunContainerOptions {
	k.t.Helper()
	k.pods.add(pod)
	ctx := klog.NewContext(context.Background(), k.logger)
	c := &pod.Spec.Containers[0]
	if err := k.m.Allocate(ctx, pod, c, lifecycle.AddOperation); err != nil {
		k.t.Fatalf("kubelet Allocate for %s: %v", pod.Name, err)
	}
	opts, err := k.m.GetDeviceRunContainerOptions(ctx, pod, c)
	if err != nil {
		k.t.Fatalf("container options for %s: %v", pod.Name, err)
	}
	return opts
}

// env returns the container's environment as a map.
func env(opts *devicemanager.DeviceRunContainerOptions) map[string]string {
	out := map[string]string{}
	for _, e := range opts.Envs {
		out[e.Name] = e.Value
	}
	return out
}

// servePodResources serves the kubelet's own PodResources v1 server, backed by the
// device manager and the active pods, on a socket in a fresh directory, as the
// kubelet serves /var/lib/kubelet/pod-resources/kubelet.sock.
func (k *kubelet) servePodResources() string {
	k.t.Helper()
	dir, err := os.MkdirTemp("", "vpr")
	if err != nil {
		k.t.Fatal(err)
	}
	sock := filepath.Join(dir, "kubelet.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		k.t.Fatal(err)
	}
	srv := grpc.NewServer()
	podresourcesv1.RegisterPodResourcesListerServer(srv, podresources.NewV1PodResourcesServer(klog.NewContext(context.Background(), k.logger), podresources.PodResourcesProviders{
		Pods: pods{k.pods}, Devices: devices{k}, Cpus: noCPUs{}, Memory: noMemory{}, DynamicResources: noDRA{},
	}))
	go func() { _ = srv.Serve(ln) }()
	k.t.Cleanup(func() { srv.Stop(); _ = os.RemoveAll(dir) })
	return sock
}

type pods struct{ l *podList }

func (p pods) GetActivePods() []*v1.Pod { return p.l.active() }
func (p pods) GetPods() []*v1.Pod       { return p.l.active() }
func (p pods) GetPodByName(ns, name string) (*v1.Pod, bool) {
	for _, pod := range p.l.active() {
		if pod.Namespace == ns && pod.Name == name {
			return pod, true
		}
	}
	return nil, false
}

// devices adapts the device manager to the PodResources server, as the kubelet's
// container manager does.
type devices struct{ k *kubelet }

func (d devices) UpdateAllocatedDevices(logger klog.Logger) { d.k.m.UpdateAllocatedDevices(logger) }
func (d devices) GetDevices(podUID, container string) []*podresourcesv1.ContainerDevices {
	return containerDevices(d.k.m.GetDevices(podUID, container))
}
func (d devices) GetAllocatableDevices(logger klog.Logger) []*podresourcesv1.ContainerDevices {
	return containerDevices(d.k.m.GetAllocatableDevices(logger))
}

func containerDevices(devs devicemanager.ResourceDeviceInstances) []*podresourcesv1.ContainerDevices {
	var out []*podresourcesv1.ContainerDevices
	for name, ds := range devs {
		for id := range ds {
			out = append(out, &podresourcesv1.ContainerDevices{ResourceName: name, DeviceIds: []string{id}})
		}
	}
	return out
}

type noCPUs struct{}

func (noCPUs) GetCPUs(*v1.Pod, *v1.Container) []int64 { return nil }
func (noCPUs) GetPodCPUs(string) []int64              { return nil }
func (noCPUs) GetAllocatableCPUs() []int64            { return nil }

type noMemory struct{}

func (noMemory) GetMemory(klog.Logger, *v1.Pod, *v1.Container) []*podresourcesv1.ContainerMemory {
	return nil
}
func (noMemory) GetPodMemory(klog.Logger, string) []*podresourcesv1.ContainerMemory { return nil }
func (noMemory) GetAllocatableMemory(klog.Logger) []*podresourcesv1.ContainerMemory { return nil }

type noDRA struct{}

func (noDRA) GetDynamicResources(klog.Logger, *v1.Pod, *v1.Container) []*podresourcesv1.DynamicResource {
	return nil
}
