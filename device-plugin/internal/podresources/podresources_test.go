package podresources

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	podresourcesapi "k8s.io/kubelet/pkg/apis/podresources/v1"
)

type lister struct {
	podresourcesapi.UnimplementedPodResourcesListerServer
	resp *podresourcesapi.ListPodResourcesResponse
}

func (l *lister) List(context.Context, *podresourcesapi.ListPodResourcesRequest) (*podresourcesapi.ListPodResourcesResponse, error) {
	return l.resp, nil
}

func TestAllocated(t *testing.T) {
	dir, err := os.MkdirTemp("", "vpr")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "kubelet.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	podresourcesapi.RegisterPodResourcesListerServer(srv, &lister{resp: &podresourcesapi.ListPodResourcesResponse{
		PodResources: []*podresourcesapi.PodResources{
			{Name: "job-a-1", Containers: []*podresourcesapi.ContainerResources{{Name: "worker", Devices: []*podresourcesapi.ContainerDevices{
				{ResourceName: "vmafx.dev/slot", DeviceIds: []string{"nvidia-0-slot-0"}},
				{ResourceName: "nvidia.com/gpu", DeviceIds: []string{"GPU-1"}},
			}}}},
			{Name: "job-b-1", Containers: []*podresourcesapi.ContainerResources{
				{Name: "worker", Devices: []*podresourcesapi.ContainerDevices{{ResourceName: "vmafx.dev/slot", DeviceIds: []string{"nvidia-1-slot-0", "nvidia-1-slot-1"}}}},
				{Name: "sidecar"},
			}},
			{Name: "unrelated"},
		},
	}})
	go func() { _ = srv.Serve(ln) }()
	defer srv.Stop()

	r := New(sock, "vmafx.dev/slot")
	defer r.Close()
	got, err := r.Allocated(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"nvidia-0-slot-0": true, "nvidia-1-slot-0": true, "nvidia-1-slot-1": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Allocated (-want +got):\n%s", diff)
	}
}

func TestAllocatedWithoutKubelet(t *testing.T) {
	r := New(filepath.Join(t.TempDir(), "missing.sock"), "vmafx.dev/slot")
	defer r.Close()
	if _, err := r.Allocated(context.Background()); err == nil {
		t.Error("Allocated succeeded without a kubelet")
	}
}
