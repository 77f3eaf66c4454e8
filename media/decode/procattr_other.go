//go:build !linux

package decode

import (
	"os"
	"os/exec"
)

// setProcAttr does nothing where there is no parent-death signal.
func setProcAttr(*exec.Cmd) {}

// maxRSS is unknown here.
func maxRSS(*os.ProcessState) int64 { return 0 }
