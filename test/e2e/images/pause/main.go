// Command pause is the local cluster's sandbox ("pause") program: the first process of
// every Pod, which holds the Pod's namespaces open. It sleeps until SIGTERM or SIGINT and
// exits 0, and reaps the zombies that end up with it when the Pod shares one process
// namespace (where it is PID 1). The cluster cannot pull registry.k8s.io/pause, so this
// is built from source and imported into containerd as vmafx.local/pause:dev.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range signals {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		reap()
	}
}

// reap collects every exited child; one SIGCHLD can stand for several exits.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
