// Package selftestverdict is the file through which a worker tells the device plugin
// how its GPU did in the Vulkan self-test (vmaf/vkkernel/selftest): the worker, which
// has the GPU's Vulkan driver, runs the self-test and writes its verdict into the
// device's directory, which the device plugin's Allocate mounts into the worker; the
// device plugin reads it on every health check and marks a device that failed
// Unhealthy. See docs/device-plugin.md for why the worker, not the plugin, runs it.
package selftestverdict

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// FileName is the verdict's file in the device's directory.
const FileName = "verdict.json"

// ContainerDir is where Allocate mounts the device's directory in the worker.
const ContainerDir = "/run/vmafx/selftest"

// Results a verdict holds.
const (
	Pass = "pass"
	Fail = "fail"
)

// maxSize bounds what Read reads: a verdict is a few hundred bytes.
const maxSize = 16 << 10

// Verdict is one self-test's outcome on a device.
type Verdict struct {
	// Result is Pass or Fail.
	Result string `json:"result"`
	// Device, Driver and API describe the Vulkan device as the worker saw it.
	Device string `json:"device"`
	Driver string `json:"driver"`
	API    string `json:"api"`
	// Message is the self-test's error on Fail: the first feature and frame that differ.
	Message string `json:"message,omitempty"`
}

// Write replaces the verdict in dir atomically (a temporary file renamed over it), so
// that a reader never sees half of one.
func Write(dir string, v Verdict) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".verdict-*")
	if err != nil {
		return fmt.Errorf("self-test verdict: %w", err)
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, FileName))
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("self-test verdict: %w", err)
	}
	return nil
}

// Read returns the verdict in dir; ok is false when there is none. A file that is not a
// verdict is an error naming it.
func Read(dir string) (v Verdict, ok bool, err error) {
	path := filepath.Join(dir, FileName)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Verdict{}, false, nil
	}
	if err != nil {
		return Verdict{}, false, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSize+1))
	if err != nil {
		return Verdict{}, false, err
	}
	if n := len(b); n > maxSize {
		return Verdict{}, false, fmt.Errorf("%s: larger than %d bytes, not a self-test verdict", path, maxSize)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return Verdict{}, false, fmt.Errorf("%s: not a self-test verdict: %w", path, err)
	}
	if v.Result != Pass && v.Result != Fail {
		return Verdict{}, false, fmt.Errorf("%s: result %q, want %s or %s", path, v.Result, Pass, Fail)
	}
	return v, true, nil
}
