//go:build !linux

package decode

import "os/exec"

// setProcAttr does nothing where there is no parent-death signal.
func setProcAttr(*exec.Cmd) {}
