//go:build !unix

package testutil

import "time"

// ProcessCPU is not measured here; benchmarks then report 0 CPU time.
func ProcessCPU() time.Duration { return 0 }
