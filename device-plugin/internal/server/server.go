package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/vmafx/vmafx/device-plugin/internal/metrics"
)

// Slots is what the server needs from the resource manager.
type Slots interface {
	// List returns the slots and a channel closed at the next change.
	List() ([]*pluginapi.Device, <-chan struct{})
	Allocate(*pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error)
	Preferred(*pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error)
}

// KubeletSocketName is the kubelet's registration socket in the device plugin directory.
const KubeletSocketName = "kubelet.sock"

// socketPrefix starts the plugin's socket names. Each Start serves a new name
// (vmafx-slot-<n>.sock): if the kubelet still holds a connection to the previous
// socket when the plugin re-registers, it would refuse a second registration of the
// same path ("device plugin already connected"), so the same path is never reused.
const socketPrefix = "vmafx-slot-"

// registerTimeout bounds each step of Start (proving our socket serves, registering).
// The kubelet dials back during Register, which takes milliseconds on a live node.
const registerTimeout = 5 * time.Second

// Options configure a Server.
type Options struct {
	// Dir is the kubelet's device plugin directory.
	Dir string
	// ResourceName is the extended resource to register.
	ResourceName string
	// Metrics receives Allocate and registration metrics; nil for none.
	Metrics *metrics.Metrics
}

// Server serves the slots to the kubelet.
type Server struct {
	slots Slots
	opts  Options

	mu         sync.Mutex // serialises Start and Stop
	grpc       *grpc.Server
	serving    sync.WaitGroup
	socket     string
	starts     int
	registered atomic.Bool
}

// New returns a stopped Server of slots.
func New(slots Slots, opts Options) *Server {
	if opts.Metrics == nil {
		opts.Metrics = metrics.Discard()
	}
	return &Server{slots: slots, opts: opts}
}

// KubeletSocket is the path of the kubelet's registration socket.
func (s *Server) KubeletSocket() string { return filepath.Join(s.opts.Dir, KubeletSocketName) }

// SocketPath is the socket being served, "" when stopped.
func (s *Server) SocketPath() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.socket
}

// Registered reports whether the last Start registered with the kubelet and no Stop
// followed.
func (s *Server) Registered() bool { return s.registered.Load() }

// Devices returns the slots as advertised, with their health.
func (s *Server) Devices() []*pluginapi.Device {
	list, _ := s.slots.List()
	return list
}

// Start serves a fresh socket and registers with the kubelet. It fails if the kubelet
// is not serving its registration socket; then nothing is left running.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.grpc != nil {
		return errors.New("device plugin server already started")
	}
	logger := klog.FromContext(ctx)
	if s.starts == 0 {
		s.removeStaleSockets(logger)
	}
	s.starts++
	name := socketPrefix + strconv.Itoa(s.starts) + ".sock"
	path := filepath.Join(s.opts.Dir, name)
	if err := os.MkdirAll(s.opts.Dir, 0o750); err != nil {
		return fmt.Errorf("creating the device plugin directory: %w", err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing a stale socket: %w", err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("listening on the plugin socket: %w", err)
	}
	s.grpc = grpc.NewServer()
	pluginapi.RegisterDevicePluginServer(s.grpc, &api{server: s, logger: logger})
	s.socket = path
	s.serving.Add(1)
	go func(g *grpc.Server) {
		defer s.serving.Done()
		if err := g.Serve(ln); err != nil {
			logger.Error(err, "Device plugin gRPC server ended", "socket", path)
		}
	}(s.grpc)

	if err := s.checkServing(ctx, path); err != nil {
		return errors.Join(fmt.Errorf("serving the plugin socket: %w", err), s.stopLocked())
	}
	if err := s.register(ctx, name); err != nil {
		s.opts.Metrics.Registrations.WithLabelValues(metrics.ResultError).Inc()
		return errors.Join(fmt.Errorf("registering with the kubelet: %w", err), s.stopLocked())
	}
	s.registered.Store(true)
	s.opts.Metrics.Registrations.WithLabelValues(metrics.ResultSuccess).Inc()
	logger.Info("Registered with the kubelet", "resource", s.opts.ResourceName, "socket", path)
	return nil
}

// Stop stops serving and removes the socket. It is safe before Start and twice.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopLocked()
}

func (s *Server) stopLocked() error {
	s.registered.Store(false)
	if s.grpc == nil {
		return nil
	}
	s.grpc.Stop()
	s.serving.Wait()
	s.grpc = nil
	path := s.socket
	s.socket = ""
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing the plugin socket: %w", err)
	}
	return nil
}

// removeStaleSockets removes the sockets a previous run of the plugin left behind;
// one plugin runs per node, so none of them is served.
func (s *Server) removeStaleSockets(logger klog.Logger) {
	stale, _ := filepath.Glob(filepath.Join(s.opts.Dir, socketPrefix+"*.sock"))
	for _, p := range stale {
		if err := os.Remove(p); err == nil {
			logger.V(2).Info("Removed a stale plugin socket", "socket", p)
		}
	}
}

func dial(path string) (*grpc.ClientConn, error) {
	return grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
}

// checkServing proves the socket answers before the kubelet is told about it.
func (s *Server) checkServing(ctx context.Context, path string) error {
	conn, err := dial(path)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	ctx, cancel := context.WithTimeout(ctx, registerTimeout)
	defer cancel()
	_, err = pluginapi.NewDevicePluginClient(conn).GetDevicePluginOptions(ctx, &pluginapi.Empty{}, grpc.WaitForReady(true))
	return err
}

func (s *Server) register(ctx context.Context, endpoint string) error {
	conn, err := dial(s.KubeletSocket())
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	ctx, cancel := context.WithTimeout(ctx, registerTimeout)
	defer cancel()
	_, err = pluginapi.NewRegistrationClient(conn).Register(ctx, &pluginapi.RegisterRequest{
		Version:      pluginapi.Version,
		Endpoint:     endpoint,
		ResourceName: s.opts.ResourceName,
		Options:      pluginOptions,
	})
	return err
}

// pluginOptions: the kubelet asks GetPreferredAllocation before choosing slots; no
// PreStartContainer, as a slot needs no per-container setup on the device.
var pluginOptions = &pluginapi.DevicePluginOptions{GetPreferredAllocationAvailable: true}
