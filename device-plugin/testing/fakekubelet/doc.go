// Package fakekubelet is a stand-in for the kubelet's device plugin registration
// service, for unit tests and benchmarks that cannot run the kubelet's own device
// manager (which always serves /var/lib/kubelet/device-plugins/kubelet.sock). Like the
// kubelet it dials a registering plugin back before accepting it. The integration tests
// under test/integration/deviceplugin use the real device manager instead.
package fakekubelet
