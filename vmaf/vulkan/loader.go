package vulkan

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// ErrUnavailable is wrapped by every error that means "this machine cannot
// run Vulkan compute": no loader, no device, or no device with what the
// kernels need. Callers map it to the BackendUnavailable reason.
var ErrUnavailable = errors.New("vulkan unavailable")

// DefaultLibrary is the Vulkan loader's soname, as Debian's libvulkan1 and
// the NVIDIA container runtime install it.
const DefaultLibrary = "libvulkan.so.1"

// Result is a failed VkResult.
type Result int32

func (r Result) Error() string {
	if s, ok := resultNames[r]; ok {
		return s
	}
	return fmt.Sprintf("VkResult(%d)", int32(r))
}

var resultNames = map[Result]string{
	1: "VK_NOT_READY", 2: "VK_TIMEOUT", 5: "VK_INCOMPLETE",
	-1: "VK_ERROR_OUT_OF_HOST_MEMORY", -2: "VK_ERROR_OUT_OF_DEVICE_MEMORY",
	-3: "VK_ERROR_INITIALIZATION_FAILED", -4: "VK_ERROR_DEVICE_LOST", -5: "VK_ERROR_MEMORY_MAP_FAILED",
	-6: "VK_ERROR_LAYER_NOT_PRESENT", -7: "VK_ERROR_EXTENSION_NOT_PRESENT", -8: "VK_ERROR_FEATURE_NOT_PRESENT",
	-9: "VK_ERROR_INCOMPATIBLE_DRIVER", -10: "VK_ERROR_TOO_MANY_OBJECTS", -11: "VK_ERROR_FORMAT_NOT_SUPPORTED",
}

// library is one dlopen of the loader; dlopen is reference counted by the C
// library, so loading it once per process is enough.
type library struct {
	handle               uintptr
	getInstanceProcAddr  uintptr
	enumerateInstanceVer uintptr
	createInstance       uintptr
}

var (
	libMu sync.Mutex
	libs  = map[string]*library{}
)

// load opens the loader at path once per process.
func load(path string) (*library, error) {
	libMu.Lock()
	defer libMu.Unlock()
	if l, ok := libs[path]; ok {
		return l, nil
	}
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("%w: no Vulkan loader (%s): %w; install libvulkan1 and a driver (mesa-vulkan-drivers, or the NVIDIA container runtime)", ErrUnavailable, path, err)
	}
	gipa, err := purego.Dlsym(h, "vkGetInstanceProcAddr")
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not a Vulkan loader: %w", ErrUnavailable, path, err)
	}
	l := &library{handle: h, getInstanceProcAddr: gipa}
	l.enumerateInstanceVer = l.instanceProc(0, "vkEnumerateInstanceVersion")
	l.createInstance = l.instanceProc(0, "vkCreateInstance")
	if l.createInstance == 0 {
		return nil, fmt.Errorf("%w: %s has no vkCreateInstance", ErrUnavailable, path)
	}
	libs[path] = l
	return l, nil
}

// instanceProc returns the address of an instance-level command (or a
// global one when instance is 0); 0 when the loader does not know it.
func (l *library) instanceProc(instance uintptr, name string) uintptr {
	n := cstring(name)
	r, _, _ := purego.SyscallN(l.getInstanceProcAddr, instance, uintptr(unsafe.Pointer(&n[0])))
	return r
}

// call runs a Vulkan command that returns a VkResult and turns failures into
// errors. The go:uintptrescapes directive keeps the Go memory that the
// arguments point to on the heap and alive until the command returns.
//
//go:uintptrescapes
func call(fn uintptr, args ...uintptr) error {
	r, _, _ := purego.SyscallN(fn, args...)
	if res := Result(int32(r)); res != 0 {
		return res
	}
	return nil
}

// callVoid runs a Vulkan command that returns nothing.
//
//go:uintptrescapes
func callVoid(fn uintptr, args ...uintptr) {
	purego.SyscallN(fn, args...)
}

// cstring returns s as a NUL-terminated byte slice.
func cstring(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}

// gostring reads a NUL-terminated string from a fixed-size C array.
func gostring(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// ptr returns the address of v's first element as an unsafe.Pointer for a
// structure field, or nil for an empty slice.
func ptr[T any](v []T) unsafe.Pointer {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Pointer(&v[0])
}

// Version formats a packed Vulkan API version as major.minor.patch.
func Version(v uint32) string {
	return fmt.Sprintf("%d.%d.%d", v>>22&0x7f, v>>12&0x3ff, v&0xfff)
}

// callRaw runs a command and returns its raw result register.
//
//go:uintptrescapes
func callRaw(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}
