package decode

import (
	"os/exec"
	"syscall"
)

// setProcAttr makes the kernel kill the child if the worker dies without
// killing it itself (a crash, SIGKILL from the kubelet).
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
