// Package fakehost builds fake host trees (/dev, /sys, /proc) laid out like a Linux
// node's, with symlinks where sysfs has them, so the device plugin's discovery and
// health checks run unchanged against a temporary directory. It is test support: the
// unit tests, the integration tests under test/integration/deviceplugin and the
// benchmarks all describe their nodes with it.
package fakehost
