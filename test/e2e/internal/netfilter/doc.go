// Package netfilter manages the local cluster's iptables state: the guard chains that keep
// pod traffic inside the machine and keep the cluster's ports closed to other machines, and
// the sweep that removes, at teardown, every chain the cluster added (its own, the
// kubelet's KUBE-*, kube-proxy's KUBE-* and the CNI plugins' CNI-*) together with the rules
// that jump to them, in IPv4 and IPv6, leaving every other rule as it was.
//
// Changes go through iptables-restore --noflush, so a batch applies atomically and rule
// text is passed exactly as iptables-save printed it.
package netfilter
