// Package vkdevice opens the machine's Vulkan device for tests: lavapipe here, a
// GPU where one is lent. Never linked into a binary (test/imports).
package vkdevice

import (
	"errors"
	"os"
	"testing"

	"github.com/vmafx/vmafx/vmaf/vkkernel"
	"github.com/vmafx/vmafx/vmaf/vulkan"
)

// Open opens the kernel on the machine's Vulkan device, which the caller closes. A
// machine without a usable device skips the test, unless VMAFX_REQUIRE_VULKAN=1 (make
// test sets it), which fails it instead.
func Open(t testing.TB) *vkkernel.Kernel {
	t.Helper()
	k, err := vkkernel.Open(vulkan.Config{})
	if err != nil {
		if os.Getenv("VMAFX_REQUIRE_VULKAN") != "1" && errors.Is(err, vulkan.ErrUnavailable) {
			t.Skipf("no usable Vulkan device (VMAFX_REQUIRE_VULKAN=1 fails instead): %v", err)
		}
		t.Fatalf("open the Vulkan kernel: %v", err)
	}
	return k
}
