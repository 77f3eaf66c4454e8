// Command printversion is a minimal stamped binary for the release tests: --version
// prints its stamp, as every VMAFX binary's does.
package main

import (
	"os"

	"github.com/vmafx/vmafx/internal/version"
)

func main() {
	version.HandleFlag(os.Args)
}
