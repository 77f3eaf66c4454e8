package training

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

var followClient = &http.Client{Timeout: 5 * time.Second}

// followHTTP reads a trainer Pod's /status from its IP.
func followHTTP(ctx context.Context, pod *corev1.Pod) (*vmafxv1.TrainerStatus, error) {
	if pod.Status.PodIP == "" {
		return nil, fmt.Errorf("pod %s has no IP yet", pod.Name)
	}
	u := "http://" + net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(vmafxv1.TrainerPort)) + vmafxv1.TrainerStatusPath
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := followClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	var st vmafxv1.TrainerStatus
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&st); err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	if st.Version != vmafxv1.TrainerStatusVersion {
		return nil, fmt.Errorf("GET %s: status version %q, want %s", u, st.Version, vmafxv1.TrainerStatusVersion)
	}
	return &st, nil
}
