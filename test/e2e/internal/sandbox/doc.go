// Package sandbox talks to the container runtime through the kubelet's own API (CRI) to
// check that the runtime is ready and, at teardown, to stop and remove every Pod
// sandbox, so that the runtime tears down each Pod's network (the CNI DEL that frees its
// address and veth) and network namespace the way the kubelet would.
package sandbox
