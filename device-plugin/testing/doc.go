// Package testing holds the device plugin's test doubles, which only tests import: a
// fake host tree (fakehost: /sys and /dev as a GPU node shows them) and a stand-in for
// the kubelet's registration service (fakekubelet) for unit tests and benchmarks that
// cannot run the kubelet's own device manager. Nothing under it is linked into a binary.
package testing
