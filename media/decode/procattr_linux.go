package decode

import (
	"os"
	"os/exec"
	"syscall"
)

// setProcAttr makes the kernel kill the child if the worker dies without
// killing it itself (a crash, SIGKILL from the kubelet).
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// maxRSS is the peak resident memory of an exited process, in bytes.
func maxRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss * 1024 // kilobytes on Linux
	}
	return 0
}
