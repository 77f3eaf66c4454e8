// Package memlimit finds the worker container's memory limit, so that the worker sizes
// its threads and the Go garbage collector to it rather than to the CPU count alone.
package memlimit

import (
	"os"
	"strconv"
	"strings"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// EnvLimit is the memory limit in bytes. The operator sets it on worker Pods from the
// container's limits.memory through the downward API; it wins over the cgroup files.
const EnvLimit = vmafxv1.EnvMemoryLimit

// unlimited: cgroup v1 reports "no limit" as a page-rounded 2^63-1.
const unlimited = 1 << 60

// cgroupFiles hold the container's limit under cgroup v2 and v1; tests point them at
// temporary files.
var cgroupFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// Detect returns the memory limit in bytes, or 0 when there is none: env's EnvLimit,
// else the cgroup's limit.
func Detect(env func(string) string) int64 {
	if n, ok := parse(env(EnvLimit)); ok {
		return n
	}
	for _, f := range cgroupFiles {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if n, ok := parse(string(data)); ok {
			return n
		}
		return 0 // "max": the cgroup has no limit
	}
	return 0
}

func parse(s string) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 || n >= unlimited {
		return 0, false
	}
	return n, true
}
