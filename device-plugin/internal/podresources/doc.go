// Package podresources reads which slots the kubelet has given to running containers
// from the kubelet's PodResources API. Slots are fungible, so the plugin never guesses
// from Allocate calls which pod holds which slot; the kubelet knows, and says so here.
package podresources
