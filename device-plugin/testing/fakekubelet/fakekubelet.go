package fakekubelet

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// Kubelet serves the registration API on <Dir>/kubelet.sock.
type Kubelet struct {
	pluginapi.UnimplementedRegistrationServer

	// Dir is the device plugin directory.
	Dir string

	t    testing.TB
	grpc *grpc.Server
	done chan struct{}

	mu     sync.Mutex
	refuse error
	regs   chan *pluginapi.RegisterRequest
}

// Start serves the registration socket in dir until Stop or the end of the test.
func Start(t testing.TB, dir string) *Kubelet {
	t.Helper()
	k := &Kubelet{Dir: dir, t: t, regs: make(chan *pluginapi.RegisterRequest, 100), done: make(chan struct{})}
	sock := filepath.Join(dir, "kubelet.sock")
	_ = os.Remove(sock)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatalf("fake kubelet: %v", err)
	}
	k.grpc = grpc.NewServer()
	pluginapi.RegisterRegistrationServer(k.grpc, k)
	go func() { defer close(k.done); _ = k.grpc.Serve(ln) }()
	t.Cleanup(k.Stop)
	return k
}

// Stop stops serving and removes the socket, as a kubelet going down does.
func (k *Kubelet) Stop() {
	k.grpc.Stop()
	<-k.done
	_ = os.Remove(filepath.Join(k.Dir, "kubelet.sock"))
}

// Refuse makes Register fail with err until called again with nil.
func (k *Kubelet) Refuse(err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.refuse = err
}

// Register dials the plugin back, as the kubelet does, then records the request.
func (k *Kubelet) Register(ctx context.Context, req *pluginapi.RegisterRequest) (*pluginapi.Empty, error) {
	k.mu.Lock()
	refuse := k.refuse
	k.mu.Unlock()
	if refuse != nil {
		return nil, refuse
	}
	c, err := dial(filepath.Join(k.Dir, req.Endpoint))
	if err != nil {
		return nil, err
	}
	defer func() { _ = c.Close() }()
	if _, err := pluginapi.NewDevicePluginClient(c).GetDevicePluginOptions(ctx, &pluginapi.Empty{}); err != nil {
		return nil, err
	}
	k.regs <- req
	return &pluginapi.Empty{}, nil
}

// Registration waits for the next registration.
func (k *Kubelet) Registration(timeout time.Duration) (*pluginapi.RegisterRequest, error) {
	select {
	case r := <-k.regs:
		return r, nil
	case <-time.After(timeout):
		return nil, errors.New("no registration")
	}
}

func dial(path string) (*grpc.ClientConn, error) {
	return grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
}

// Plugin is a client of a registered plugin.
type Plugin struct {
	pluginapi.DevicePluginClient
	conn *grpc.ClientConn
}

// Connect dials the plugin that registered with req.
func (k *Kubelet) Connect(req *pluginapi.RegisterRequest) *Plugin {
	k.t.Helper()
	c, err := dial(filepath.Join(k.Dir, req.Endpoint))
	if err != nil {
		k.t.Fatalf("fake kubelet: %v", err)
	}
	p := &Plugin{DevicePluginClient: pluginapi.NewDevicePluginClient(c), conn: c}
	k.t.Cleanup(func() { _ = c.Close() })
	return p
}

// Watch runs ListAndWatch until ctx ends and sends every list received.
func (p *Plugin) Watch(ctx context.Context) (<-chan []*pluginapi.Device, error) {
	stream, err := p.ListAndWatch(ctx, &pluginapi.Empty{})
	if err != nil {
		return nil, err
	}
	out := make(chan []*pluginapi.Device, 100)
	go func() {
		defer close(out)
		for {
			resp, err := stream.Recv()
			if err != nil {
				return
			}
			select {
			case out <- resp.Devices:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// SocketDir returns a short temporary directory for sockets, removed when the test ends:
// unix socket paths are limited to 108 bytes, which t.TempDir() with a long test name
// can exceed.
func SocketDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "vdp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}
