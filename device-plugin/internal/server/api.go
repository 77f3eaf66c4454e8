package server

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/vmafx/vmafx/device-plugin/internal/metrics"
	"github.com/vmafx/vmafx/device-plugin/internal/slots"
)

// api implements the DevicePlugin gRPC service for a Server.
type api struct {
	pluginapi.UnimplementedDevicePluginServer
	server *Server
	logger klog.Logger
}

var _ pluginapi.DevicePluginServer = &api{}

func (a *api) GetDevicePluginOptions(context.Context, *pluginapi.Empty) (*pluginapi.DevicePluginOptions, error) {
	return pluginOptions, nil
}

// ListAndWatch sends the full slot list, then again after every health change, until
// the kubelet hangs up or the server stops.
func (a *api) ListAndWatch(_ *pluginapi.Empty, stream grpc.ServerStreamingServer[pluginapi.ListAndWatchResponse]) error {
	for {
		list, changed := a.server.slots.List()
		if err := stream.Send(&pluginapi.ListAndWatchResponse{Devices: list}); err != nil {
			return err
		}
		a.logger.V(4).Info("Sent slot list to the kubelet", "slots", len(list))
		select {
		case <-changed:
		case <-stream.Context().Done():
			return nil
		}
	}
}

func (a *api) GetPreferredAllocation(_ context.Context, req *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	resp, err := a.server.slots.Preferred(req)
	if err != nil {
		return nil, grpcError(err)
	}
	if a.logger.V(4).Enabled() {
		a.logger.V(4).Info("Preferred allocation", "request", req, "response", resp)
	}
	return resp, nil
}

// Allocate answers from the slots' precomputed responses; it does no discovery and no
// I/O, so it stays far under the kubelet's patience (and our 1 ms p99 target).
func (a *api) Allocate(_ context.Context, req *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	start := time.Now()
	resp, err := a.server.slots.Allocate(req)
	m := a.server.opts.Metrics
	m.AllocateDuration.Observe(time.Since(start).Seconds())
	if err != nil {
		m.AllocateRequests.WithLabelValues(metrics.ResultError).Inc()
		a.logger.V(2).Info("Refused an allocation", "err", err)
		return nil, grpcError(err)
	}
	m.AllocateRequests.WithLabelValues(metrics.ResultSuccess).Inc()
	if a.logger.V(4).Enabled() {
		for _, cr := range req.ContainerRequests {
			a.logger.V(4).Info("Allocated slots", "slots", cr.DevicesIds)
		}
	}
	return resp, nil
}

func (a *api) PreStartContainer(context.Context, *pluginapi.PreStartContainerRequest) (*pluginapi.PreStartContainerResponse, error) {
	return &pluginapi.PreStartContainerResponse{}, nil
}

// codedError gives an error a gRPC status code on the wire while errors.Is still
// sees the sentinel it wraps.
type codedError struct {
	code codes.Code
	err  error
}

func (e *codedError) Error() string              { return e.err.Error() }
func (e *codedError) Unwrap() error              { return e.err }
func (e *codedError) GRPCStatus() *status.Status { return status.New(e.code, e.err.Error()) }

// grpcError maps the slots' sentinels to status codes: a request naming unknown slots
// or malformed is InvalidArgument; one naming unhealthy slots is FailedPrecondition
// (valid, but not now).
func grpcError(err error) error {
	code := codes.Internal
	switch {
	case errors.Is(err, slots.ErrUnknownSlot), errors.Is(err, slots.ErrInvalidRequest):
		code = codes.InvalidArgument
	case errors.Is(err, slots.ErrUnhealthySlot):
		code = codes.FailedPrecondition
	}
	return &codedError{code: code, err: err}
}
