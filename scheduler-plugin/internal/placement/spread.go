package placement

import fwk "k8s.io/kube-scheduler/framework"

// spreadScore is the share of a node's slots still free once the Pod is placed, from 0 to
// 100: the emptiest node scores highest. requested includes the Pod's own slots. A node with
// no slots, or too few, scores 0.
func spreadScore(allocatable, requested int64) int64 {
	if allocatable <= 0 || requested > allocatable {
		return 0
	}
	return (allocatable - requested) * fwk.MaxScore / allocatable
}
