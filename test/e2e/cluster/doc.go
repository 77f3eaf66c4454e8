// Package cluster runs the project's local single-node Kubernetes cluster: a real etcd,
// kube-apiserver (Node and RBAC authorizers), kube-controller-manager, kube-scheduler,
// containerd with runc and a CNI bridge, kubelet and kube-proxy, every one a host process
// built from Go module sources, with certificates of its own and all state in one folder.
//
// Up starts what is not running (so it is idempotent and also restarts a part that
// died), Down stops every process it started by its recorded PID and puts back the host
// state the cluster changed, Collect gathers every log and the cluster's view of its
// objects into one folder. docs/local-cluster.md is the user's guide.
package cluster
