package placement

import fwk "k8s.io/kube-scheduler/framework"

// binPackScore is the share of a node's slots in use once the Pod is placed, from 0 to 100:
// the fullest node that still fits scores highest. requested includes the Pod's own slots. A
// node with no slots, or too few, scores 0.
func binPackScore(allocatable, requested int64) int64 {
	if allocatable <= 0 || requested > allocatable {
		return 0
	}
	return requested * fwk.MaxScore / allocatable
}
