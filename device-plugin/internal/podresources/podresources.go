package podresources

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	podresourcesapi "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// callTimeout bounds one List call; the kubelet answers from memory.
const callTimeout = 5 * time.Second

// maxMessageSize allows List answers for a full node (the kubelet's own client uses
// 16 MiB).
const maxMessageSize = 16 << 20

// Reader lists the slots of one resource that containers hold.
type Reader struct {
	socket, resource string

	mu   sync.Mutex
	conn *grpc.ClientConn
}

// New returns a Reader of resource through the PodResources socket.
func New(socket, resource string) *Reader {
	return &Reader{socket: socket, resource: resource}
}

// Allocated returns the slot IDs of the resource held by the node's containers.
func (r *Reader) Allocated(ctx context.Context) (map[string]bool, error) {
	client, err := r.client()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	resp, err := client.List(ctx, &podresourcesapi.ListPodResourcesRequest{})
	if err != nil {
		return nil, fmt.Errorf("listing pod resources: %w", err)
	}
	ids := map[string]bool{}
	for _, pod := range resp.GetPodResources() {
		for _, c := range pod.GetContainers() {
			for _, d := range c.GetDevices() {
				if d.GetResourceName() != r.resource {
					continue
				}
				for _, id := range d.GetDeviceIds() {
					ids[id] = true
				}
			}
		}
	}
	return ids, nil
}

func (r *Reader) client() (podresourcesapi.PodResourcesListerClient, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conn == nil {
		conn, err := grpc.NewClient("unix://"+r.socket,
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessageSize)))
		if err != nil {
			return nil, fmt.Errorf("pod resources client: %w", err)
		}
		r.conn = conn
	}
	return podresourcesapi.NewPodResourcesListerClient(r.conn), nil
}

// Close releases the connection.
func (r *Reader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conn == nil {
		return nil
	}
	err := r.conn.Close()
	r.conn = nil
	return err
}
