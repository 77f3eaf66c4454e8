// Package hoststate records the parts of the host that a local cluster changes outside its
// state folder (kernel parameters, host paths, mounts, network links, cgroups), puts them
// back at teardown, and takes snapshots of them to prove, by comparing the one taken
// before the cluster started with the one taken after it stopped, that nothing is left.
package hoststate
