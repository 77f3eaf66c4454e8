// Package scale measures VMAFX's control plane at cluster scale: a real kube-apiserver and
// etcd (test/integration/testenv), the real vmafx-operator and the real vmafx-scheduler,
// each built from this tree and run as its own process, so that its CPU time and memory
// are read from /proc and its API requests counted apart.
//
// No kubelet and no device plugin run: the benchmark writes the Node objects, the
// VmafxNodes and their heartbeats (every 10 s, as device plugins do), and plays the kubelet
// of every node: each worker Pod bound to a node is marked Running, and after a simulated
// scoring time (1 s by default) Succeeded with a worker result in its termination message,
// two status writes as a kubelet makes them. Everything between a
// job's creation and its Succeeded status (the operator's reconciles and writes, the
// scheduler's queue, filter, score and bind) is the real code.
//
// The only code is in the benchmark (scale_test.go and its helpers); see BenchmarkScale
// for how to run it and docs/benchmarks.md for the figures.
package scale
