// Package health watches the node's devices and marks all of a device's slots
// Unhealthy, together, as soon as one of its device nodes disappears or sysfs says the
// device is gone, and Healthy again once it has stayed present for a recovery delay.
// fsnotify events on the device node directories trigger a check at once; a periodic
// check catches what inotify does not report (sysfs) or misses.
package health
