package sandbox

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Client is a CRI client of one runtime socket.
type Client struct {
	conn    *grpc.ClientConn
	runtime runtimeapi.RuntimeServiceClient
}

// Dial connects to the runtime's unix socket (a path). The connection is lazy: errors
// show on the first call.
func Dial(socket string) (*Client, error) {
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	return &Client{conn: conn, runtime: runtimeapi.NewRuntimeServiceClient(conn)}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Ready returns nil when the runtime reports RuntimeReady and NetworkReady (a CNI config
// is loaded) true.
func (c *Client) Ready(ctx context.Context) error {
	resp, err := c.runtime.Status(ctx, &runtimeapi.StatusRequest{})
	if err != nil {
		return err
	}
	// Other conditions are informational (containerd 2.x adds
	// ContainerdHasNoDeprecationWarnings, false on a cgroup v1 host).
	seen := map[string]bool{}
	var errs []error
	for _, cond := range resp.GetStatus().GetConditions() {
		t := cond.GetType()
		if t != runtimeapi.RuntimeReady && t != runtimeapi.NetworkReady {
			continue
		}
		seen[t] = true
		if !cond.GetStatus() {
			errs = append(errs, fmt.Errorf("%s: %s %s", t, cond.GetReason(), cond.GetMessage()))
		}
	}
	for _, t := range []string{runtimeapi.RuntimeReady, runtimeapi.NetworkReady} {
		if !seen[t] {
			errs = append(errs, fmt.Errorf("%s: not reported", t))
		}
	}
	return errors.Join(errs...)
}

// RemoveAll stops and removes every Pod sandbox (and with it its containers) and returns
// how many it removed. It goes on past a failing sandbox and reports all failures.
func (c *Client) RemoveAll(ctx context.Context) (int, error) {
	resp, err := c.runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return 0, err
	}
	var errs []error
	n := 0
	for _, sb := range resp.GetItems() {
		id := sb.GetId()
		if _, err := c.runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: id}); err != nil {
			errs = append(errs, fmt.Errorf("stop sandbox %s (%s/%s): %w", id, sb.GetMetadata().GetNamespace(), sb.GetMetadata().GetName(), err))
			continue
		}
		if _, err := c.runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id}); err != nil {
			errs = append(errs, fmt.Errorf("remove sandbox %s: %w", id, err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}
