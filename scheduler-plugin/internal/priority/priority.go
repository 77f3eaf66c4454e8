package priority

import (
	"context"
	"strconv"

	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

var _ fwk.QueueSortPlugin = &Priority{}

// Name is the plugin's name in the scheduler configuration.
const Name = "VmafxPriority"

// The range of spec.priority; an annotation outside it (a Pod written by hand) is clamped,
// so that no Pod can jump ahead of every job the API admits.
const (
	minJobPriority = 0
	maxJobPriority = 1000
)

// Priority orders the scheduling queue. It keeps no state.
type Priority struct{}

// New returns the plugin; it takes no args.
func New(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
	return &Priority{}, nil
}

// Name returns the plugin's name.
func (*Priority) Name() string { return Name }

// Less reports whether a goes before b: higher Kubernetes priority first, then higher job
// priority, then the one that entered the queue first.
func (*Priority) Less(a, b fwk.QueuedEntityInfo) bool {
	if pa, pb := a.GetPriority(), b.GetPriority(); pa != pb {
		return pa > pb
	}
	if ja, jb := JobPriority(a), JobPriority(b); ja != jb {
		return ja > jb
	}
	return a.GetTimestamp().Before(b.GetTimestamp())
}

// podEntity is a queue entry that holds a single Pod; pod groups do not, and sort by their
// Kubernetes priority and timestamp alone.
type podEntity interface {
	GetPodInfo() fwk.PodInfo
}

// JobPriority is the job priority of a queue entry: its Pod's vmafx.dev/priority annotation,
// clamped to 0..1000; 0 when absent or not a number (Pods that are not VMAFX workers).
func JobPriority(e fwk.QueuedEntityInfo) int {
	pe, ok := e.(podEntity)
	if !ok {
		return 0
	}
	pi := pe.GetPodInfo()
	if pi == nil || pi.GetPod() == nil {
		return 0
	}
	v, ok := pi.GetPod().Annotations[vmafxv1.AnnotationPriority]
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0
	}
	return min(max(n, minJobPriority), maxJobPriority)
}
