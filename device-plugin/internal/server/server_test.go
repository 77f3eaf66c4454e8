package server

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"
	"k8s.io/klog/v2/ktesting"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/device-plugin/internal/discovery"
	"github.com/vmafx/vmafx/device-plugin/internal/metrics"
	"github.com/vmafx/vmafx/device-plugin/internal/slots"
	"github.com/vmafx/vmafx/device-plugin/testing/fakekubelet"
)

func twoGPUs() *slots.Set {
	var devs []discovery.Device
	for i := 0; i < 2; i++ {
		devs = append(devs, discovery.Device{
			Vendor: vmafxv1.VendorNVIDIA, Index: i, Slots: 4,
			Nodes: []discovery.Node{{Path: "/dev/nvidia" + string(rune('0'+i))}, {Path: "/dev/nvidiactl"}, {Path: "/dev/nvidia-uvm"}},
		})
	}
	return slots.New(devs, slots.Options{})
}

func newServer(t testing.TB, dir string, set *slots.Set) (*Server, *metrics.Metrics) {
	m := metrics.Discard()
	s := New(set, Options{Dir: dir, ResourceName: vmafxv1.ResourceSlot, Metrics: m})
	t.Cleanup(func() { _ = s.Stop() })
	return s, m
}

func TestStartRegisters(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	dir := fakekubelet.SocketDir(t)
	k := fakekubelet.Start(t, dir)
	s, m := newServer(t, dir, twoGPUs())
	if err := s.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	req, err := k.Registration(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := &pluginapi.RegisterRequest{
		Version: "v1beta1", Endpoint: "vmafx-slot-1.sock", ResourceName: "vmafx.dev/slot",
		Options: &pluginapi.DevicePluginOptions{GetPreferredAllocationAvailable: true},
	}
	if diff := cmp.Diff(want, req, protocmp.Transform()); diff != "" {
		t.Errorf("registration (-want +got):\n%s", diff)
	}
	if !s.Registered() {
		t.Error("Registered() = false after Start")
	}
	if got := s.SocketPath(); got != filepath.Join(dir, "vmafx-slot-1.sock") {
		t.Errorf("SocketPath() = %q", got)
	}
	if got := testutil.ToFloat64(m.Registrations.WithLabelValues(metrics.ResultSuccess)); got != 1 {
		t.Errorf("registrations = %v, want 1", got)
	}
	if got := len(s.Devices()); got != 8 {
		t.Errorf("Devices() has %d slots, want 8", got)
	}
	if err := s.Start(ctx); err == nil {
		t.Error("second Start succeeded")
	}
}

func TestStopIsSafe(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	dir := fakekubelet.SocketDir(t)
	fakekubelet.Start(t, dir)
	s, _ := newServer(t, dir, twoGPUs())
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop before Start: %v", err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	sock := s.SocketPath()
	for i := 0; i < 2; i++ {
		if err := s.Stop(); err != nil {
			t.Fatalf("Stop #%d: %v", i+1, err)
		}
	}
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket %s still there after Stop: %v", sock, err)
	}
	if s.Registered() || s.SocketPath() != "" {
		t.Error("stopped server still registered or serving")
	}
}

func TestStartWithoutKubelet(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	dir := fakekubelet.SocketDir(t)
	s, m := newServer(t, dir, twoGPUs())
	if err := s.Start(ctx); err == nil {
		t.Fatal("Start succeeded without a kubelet")
	}
	if s.SocketPath() != "" || s.Registered() {
		t.Error("failed Start left the server running")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "vmafx-slot-*")); len(left) != 0 {
		t.Errorf("failed Start left sockets %v", left)
	}
	if got := testutil.ToFloat64(m.Registrations.WithLabelValues(metrics.ResultError)); got != 1 {
		t.Errorf("failed registrations = %v, want 1", got)
	}

	k := fakekubelet.Start(t, dir)
	k.Refuse(errors.New("not today"))
	if err := s.Start(ctx); err == nil || !strings.Contains(err.Error(), "not today") {
		t.Fatalf("Start against a refusing kubelet = %v", err)
	}
	k.Refuse(nil)
	if err := s.Start(ctx); err != nil {
		t.Fatalf("Start once the kubelet is up: %v", err)
	}
}

func TestRestartServesANewSocket(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	dir := fakekubelet.SocketDir(t)
	stale := filepath.Join(dir, "vmafx-slot-7.sock")
	if err := os.WriteFile(stale, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	k := fakekubelet.Start(t, dir)
	s, _ := newServer(t, dir, twoGPUs())
	var endpoints []string
	for i := 0; i < 2; i++ {
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		req, err := k.Registration(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		endpoints = append(endpoints, req.Endpoint)
		if err := s.Stop(); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{"vmafx-slot-1.sock", "vmafx-slot-2.sock"}, endpoints); diff != "" {
		t.Errorf("endpoints (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale socket of an earlier run not removed: %v", err)
	}
}

// started returns a server registered with a fake kubelet and a client of it.
func started(t *testing.T, set *slots.Set) (*fakekubelet.Plugin, *metrics.Metrics) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	dir := fakekubelet.SocketDir(t)
	k := fakekubelet.Start(t, dir)
	s, m := newServer(t, dir, set)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	req, err := k.Registration(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return k.Connect(req), m
}

func TestListAndWatchStreamsHealthChanges(t *testing.T) {
	set := twoGPUs()
	p, _ := started(t, set)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lists, err := p.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	health := func(list []*pluginapi.Device) map[string]string {
		out := map[string]string{}
		for _, d := range list {
			out[d.ID] = d.Health
		}
		return out
	}
	next := func() map[string]string {
		select {
		case l := <-lists:
			return health(l)
		case <-time.After(5 * time.Second):
			t.Fatal("no list within 5 s")
			return nil
		}
	}
	first := next()
	if len(first) != 8 || first["nvidia-1-slot-3"] != pluginapi.Healthy {
		t.Fatalf("first list = %v", first)
	}
	set.SetHealth("nvidia-1", false, "gone")
	second := next()
	for id, h := range second {
		wantH := pluginapi.Healthy
		if strings.HasPrefix(id, "nvidia-1-") {
			wantH = pluginapi.Unhealthy
		}
		if h != wantH {
			t.Errorf("after nvidia-1 went away, %s is %s, want %s", id, h, wantH)
		}
	}
	set.SetHealth("nvidia-1", true, "")
	if third := next(); third["nvidia-1-slot-0"] != pluginapi.Healthy {
		t.Errorf("after recovery nvidia-1-slot-0 is %s", third["nvidia-1-slot-0"])
	}
}

func TestAllocateOverGRPC(t *testing.T) {
	set := twoGPUs()
	p, m := started(t, set)
	ctx := context.Background()
	resp, err := p.Allocate(ctx, &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{"nvidia-1-slot-0"}}}})
	if err != nil {
		t.Fatalf("Allocate: %v", err)
	}
	want := &pluginapi.ContainerAllocateResponse{
		Envs: map[string]string{"VMAFX_BACKEND": "cuda", "VMAFX_DEVICE": "nvidia-1", "VMAFX_SLOTS": "nvidia-1-slot-0", "NVIDIA_DRIVER_CAPABILITIES": "compute,utility,graphics"},
		Devices: []*pluginapi.DeviceSpec{
			{ContainerPath: "/dev/nvidia1", HostPath: "/dev/nvidia1", Permissions: "rw"},
			{ContainerPath: "/dev/nvidiactl", HostPath: "/dev/nvidiactl", Permissions: "rw"},
			{ContainerPath: "/dev/nvidia-uvm", HostPath: "/dev/nvidia-uvm", Permissions: "rw"},
		},
	}
	if diff := cmp.Diff(want, resp.ContainerResponses[0], protocmp.Transform()); diff != "" {
		t.Errorf("Allocate (-want +got):\n%s", diff)
	}

	set.SetHealth("nvidia-0", false, "device node /dev/nvidia0 missing")
	tests := []struct {
		name     string
		ids      []string
		wantCode codes.Code
		wantText string
	}{
		{name: "unknown", ids: []string{"nvidia-9-slot-0"}, wantCode: codes.InvalidArgument, wantText: `slot "nvidia-9-slot-0": unknown slot`},
		{name: "unhealthy", ids: []string{"nvidia-0-slot-1"}, wantCode: codes.FailedPrecondition, wantText: "/dev/nvidia0 missing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.Allocate(ctx, &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: tc.ids}}})
			st, _ := status.FromError(err)
			if st.Code() != tc.wantCode || !strings.Contains(st.Message(), tc.wantText) {
				t.Errorf("Allocate error = %v, want code %v mentioning %q", err, tc.wantCode, tc.wantText)
			}
		})
	}
	if got := testutil.ToFloat64(m.AllocateRequests.WithLabelValues(metrics.ResultSuccess)); got != 1 {
		t.Errorf("successful allocations = %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.AllocateRequests.WithLabelValues(metrics.ResultError)); got != 2 {
		t.Errorf("refused allocations = %v, want 2", got)
	}

	pref, err := p.GetPreferredAllocation(ctx, &pluginapi.PreferredAllocationRequest{ContainerRequests: []*pluginapi.ContainerPreferredAllocationRequest{{
		AvailableDeviceIDs: []string{"nvidia-0-slot-0", "nvidia-1-slot-1", "nvidia-1-slot-2"}, AllocationSize: 1,
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"nvidia-1-slot-1"}, pref.ContainerResponses[0].DeviceIDs); diff != "" {
		t.Errorf("preferred (-want +got):\n%s", diff)
	}
}

// TestAllocateKeepsTheSentinel calls the service without gRPC: the error carries a
// status code and still unwraps to the slots' sentinel.
func TestAllocateKeepsTheSentinel(t *testing.T) {
	s := New(twoGPUs(), Options{ResourceName: vmafxv1.ResourceSlot})
	a := &api{server: s, logger: ktesting.NewLogger(t, ktesting.DefaultConfig)}
	_, err := a.Allocate(context.Background(), &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{"x"}}}})
	if !errors.Is(err, slots.ErrUnknownSlot) {
		t.Errorf("error %v does not wrap ErrUnknownSlot", err)
	}
	if st, _ := status.FromError(err); st.Code() != codes.InvalidArgument {
		t.Errorf("code = %v, want InvalidArgument", st.Code())
	}
}
