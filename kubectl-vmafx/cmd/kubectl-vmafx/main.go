// Command kubectl-vmafx is the VMAFX kubectl plugin (`kubectl vmafx ...`): it scores video
// pairs, follows and cancels VmafxJobs and shows the scoring nodes, through the user's
// kubeconfig like kubectl itself (docs/kubectl-plugin.md).
package main

import (
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/vmafx/vmafx/internal/version"
	"github.com/vmafx/vmafx/kubectl-vmafx/internal/cli"
)

func main() {
	version.HandleFlag(os.Args)
	cmd := cli.New(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	if err := cmd.Execute(); err != nil {
		os.Exit(1)
	}
}
