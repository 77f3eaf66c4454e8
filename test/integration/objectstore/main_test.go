// Package objectstore_test runs the worker's object storage fetchers and outputs
// (media/fetch, S3 through the AWS SDK) and the vmafx-worker binary against a real S3
// server: versitygw with its posix backend, built from module sources (make versitygw),
// run as a process on 127.0.0.1 with SigV4 credentials and stopped by its PID.
//
// VMAFX_VERSITYGW names the versitygw binary; without it the package skips, and fails
// under VMAFX_REQUIRE_INTEGRATION (make test sets both). GCS and Azure have no server
// that runs here: media/fetch tests both against fakes that speak their APIs.
package objectstore_test

import (
	"fmt"
	"github.com/vmafx/vmafx/internal/testutil"
	"os"
	"path/filepath"
	"testing"
)

const (
	envVersitygw = "VMAFX_VERSITYGW"
	envRequire   = "VMAFX_REQUIRE_INTEGRATION"
)

var (
	// s3 is the server the tests share; each test makes its own bucket.
	s3 *server
	// workerBinary is vmafx-worker, built for this run.
	workerBinary string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	bin := os.Getenv(envVersitygw)
	if bin == "" {
		if os.Getenv(envRequire) != "" {
			fmt.Fprintf(os.Stderr, "objectstore: %s is set but %s is not (make versitygw prints it)\n", envRequire, envVersitygw)
			return 1
		}
		fmt.Fprintf(os.Stderr, "objectstore: SKIP: %s is not set (make versitygw builds the S3 server)\n", envVersitygw)
		return 0
	}
	dir, err := os.MkdirTemp("", "vmafx-objectstore-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if workerBinary, err = testutil.BuildBinary(dir, "./worker/cmd/vmafx-worker", "CGO_ENABLED=0"); err != nil {
		fmt.Fprintf(os.Stderr, "objectstore: building vmafx-worker: %v\n", err)
		return 1
	}
	if s3, err = startServer(bin, filepath.Join(dir, "s3")); err != nil {
		fmt.Fprintf(os.Stderr, "objectstore: starting versitygw: %v\n", err)
		return 1
	}
	defer s3.stop()
	return m.Run()
}
