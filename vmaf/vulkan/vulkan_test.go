package vulkan

import (
	_ "embed"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

//go:embed testdata/scale.spv
var scaleSPV []byte

// openOrSkip opens the default device. Without a loader the test skips,
// unless VMAFX_REQUIRE_VULKAN=1 (make test sets it) makes that a failure.
func openOrSkip(t testing.TB) *Device {
	t.Helper()
	d, err := Open(Config{})
	if err != nil {
		if os.Getenv("VMAFX_REQUIRE_VULKAN") != "1" && errors.Is(err, ErrUnavailable) {
			t.Skipf("no usable Vulkan device (install libvulkan1 and mesa-vulkan-drivers; VMAFX_REQUIRE_VULKAN=1 fails instead): %v", err)
		}
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(d.Close)
	return d
}

func TestOpenInfo(t *testing.T) {
	d := openOrSkip(t)
	t.Logf("device %+v", d.Info)
	if d.Info.Name == "" || d.Info.Driver == "" || !strings.HasPrefix(d.Info.APIVersion, "1.") {
		t.Errorf("Info = %+v, want a name, a driver and an API version 1.x", d.Info)
	}
	if d.Info.Memory == 0 {
		t.Errorf("Memory = 0, want the device-local heap's size")
	}
	if d.Info.MaxWorkGroupCount[0] < 65535 {
		t.Errorf("MaxWorkGroupCount = %v, Vulkan guarantees 65535", d.Info.MaxWorkGroupCount)
	}
}

// TestDispatch uploads through a staging buffer, runs a 64-bit shader and
// reads the result back, as the kernels do.
func TestDispatch(t *testing.T) {
	d := openOrSkip(t)
	const n = 1000
	const k = 0xfffffff1
	p, err := d.NewPipeline(scaleSPV, 2, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	stage, in := newBuffer(t, d, 4*n, Host), newBuffer(t, d, 4*n, DeviceLocal)
	out, back := newBuffer(t, d, 8*n, DeviceLocal), newBuffer(t, d, 8*n, Host)
	set, err := p.Bind(in, out)
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	for round := range 3 { // a stream is reused frame after frame
		src := stage.Uint32s()
		for i := range n {
			src[i] = uint32(i*7919 + round)
		}
		if err := s.Begin(); err != nil {
			t.Fatal(err)
		}
		s.Copy(in, 0, stage, 0, 4*n)
		s.Barrier()
		push := make([]byte, 8)
		binary.LittleEndian.PutUint32(push, n)
		binary.LittleEndian.PutUint32(push[4:], k)
		s.Dispatch(p, set, push, (n+63)/64, 1, 1)
		s.Barrier()
		s.Copy(back, 0, out, 0, 8*n)
		s.Barrier()
		if err := s.Submit(); err != nil {
			t.Fatal(err)
		}
		if err := s.Wait(); err != nil {
			t.Fatal(err)
		}
		got := unsafe.Slice((*uint64)(unsafe.Pointer(&back.Bytes()[0])), n)
		for i := range n {
			if want := uint64(uint32(i*7919+round)) * k >> 3; got[i] != want {
				t.Fatalf("round %d: out[%d] = %d, want %d", round, i, got[i], want)
			}
		}
	}
	// Three rounds: three submissions, three waits, the copies into the
	// host-visible buffer back as readback and those out of the staging
	// as uploads, three barriers and a dispatch each.
	if got, want := d.Stats(), (Stats{Submits: 3, Waits: 3, ReadbackBytes: 3 * 8 * n, UploadBytes: 3 * 4 * n, Barriers: 9, Dispatches: 3}); got != want {
		t.Errorf("Stats = %+v, want %+v", got, want)
	}
	if err := s.Wait(); err != nil || d.Stats().Waits != 3 {
		t.Errorf("a Wait with nothing pending: %v, %d waits counted, want 3", err, d.Stats().Waits)
	}
}

func newBuffer(t *testing.T, d *Device, size int64, mem Memory) *Buffer {
	t.Helper()
	b, err := d.NewBuffer(size, mem)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

func TestDispatchErrors(t *testing.T) {
	d := openOrSkip(t)
	if _, err := d.NewPipeline([]byte{1, 2, 3}, 1, 0, 1); err == nil {
		t.Error("NewPipeline accepted 3 bytes of SPIR-V")
	}
	p, err := d.NewPipeline(scaleSPV, 2, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	b := newBuffer(t, d, 64, Host)
	if _, err := p.Bind(b); err == nil {
		t.Error("Bind accepted 1 buffer for 2 bindings")
	}
	set, err := p.Bind(b, b)
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Begin(); err != nil {
		t.Fatal(err)
	}
	s.Dispatch(p, set, make([]byte, 4), 1, 1, 1)
	if err := s.Submit(); err == nil || !strings.Contains(err.Error(), "push constants") {
		t.Errorf("Submit after a bad dispatch = %v, want the push constant error", err)
	}
}

func TestOpenNoLoader(t *testing.T) {
	_, err := Open(Config{Library: "libvulkan-missing.so.9"})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no Vulkan loader") {
		t.Errorf("Open = %v, want ErrUnavailable naming the missing loader", err)
	}
}

// TestOpenNoDevice runs itself in a child whose loader is pointed at no
// driver (VK_DRIVER_FILES, VK_ICD_FILENAMES for older loaders), as on a node
// whose image has the loader but no ICD for its GPU.
func TestOpenNoDevice(t *testing.T) {
	if os.Getenv("VMAFX_VULKAN_CHILD") == "nodevice" {
		_, err := Open(Config{})
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no Vulkan device") {
			t.Fatalf("Open = %v, want ErrUnavailable naming the missing device", err)
		}
		return
	}
	openOrSkip(t).Close() // skips where there is no loader at all
	missing := t.TempDir() + "/none.json"
	cmd := exec.Command(os.Args[0], "-test.run=^TestOpenNoDevice$", "-test.v")
	cmd.Env = append(os.Environ(), "VMAFX_VULKAN_CHILD=nodevice", "VK_DRIVER_FILES="+missing, "VK_ICD_FILENAMES="+missing)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PASS") {
		t.Errorf("child: %v\n%s", err, out)
	}
}

// TestChoose covers device selection, including the devices this machine
// does not have (one without shaderInt64, one without a compute queue).
func TestChoose(t *testing.T) {
	gpu := candidate{index: 0, info: Info{Name: "GPU A"}, deviceType: physicalDeviceDiscrete, int64: true}
	cpu := candidate{index: 1, info: Info{Name: "llvmpipe"}, deviceType: physicalDeviceCPU, int64: true}
	no64 := candidate{index: 2, info: Info{Name: "Old GPU"}, deviceType: physicalDeviceDiscrete}
	noq := candidate{index: 3, info: Info{Name: "Display only"}, deviceType: physicalDeviceIntegrated, int64: true, computeQueue: -1}
	tests := []struct {
		name    string
		cands   []candidate
		want    string
		wantErr string
	}{
		{name: "discrete first", cands: []candidate{cpu, gpu}, want: "GPU A"},
		{name: "by index", cands: []candidate{gpu, cpu}, want: "llvmpipe"},
		{name: "by name", cands: []candidate{gpu, cpu}, want: "GPU A"},
		{name: "skips no int64", cands: []candidate{no64, cpu}, want: "llvmpipe"},
		{name: "no int64", cands: []candidate{no64}, wantErr: "Old GPU lacks shaderInt64"},
		{name: "no compute queue", cands: []candidate{noq}, wantErr: "Display only has no compute queue"},
		{name: "none", wantErr: "no Vulkan device"},
		{name: "gpu only", cands: []candidate{cpu, gpu}, want: "GPU A"},
		{name: "gpu only, cpu device", cands: []candidate{cpu}, wantErr: "llvmpipe is a CPU implementation"},
	}
	wants := map[string]string{"by index": "1", "by name": "GPU"}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := choose(tc.cands, wants[tc.name], strings.HasPrefix(tc.name, "gpu only"))
			if tc.wantErr != "" {
				if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("choose = %v, want ErrUnavailable with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || c.info.Name != tc.want {
				t.Errorf("choose = %q, %v, want %q", c.info.Name, err, tc.want)
			}
		})
	}
}

// TestLayout checks the structures against the sizes of vulkan_core.h
// (1.3.239) on LP64.
func TestLayout(t *testing.T) {
	sizes := map[string][2]uintptr{
		"VkApplicationInfo":                {unsafe.Sizeof(applicationInfo{}), 48},
		"VkInstanceCreateInfo":             {unsafe.Sizeof(instanceCreateInfo{}), 64},
		"VkPhysicalDeviceProperties2":      {unsafe.Sizeof(physicalDeviceProperties2{}), 840},
		"VkPhysicalDeviceDriverProperties": {unsafe.Sizeof(physicalDeviceDriverProperties{}), 536},
		"VkQueueFamilyProperties":          {unsafe.Sizeof(queueFamilyProperties{}), 24},
		"VkPhysicalDeviceMemoryProperties": {unsafe.Sizeof(physicalDeviceMemoryProperties{}), 520},
		"VkDeviceQueueCreateInfo":          {unsafe.Sizeof(deviceQueueCreateInfo{}), 40},
		"VkDeviceCreateInfo":               {unsafe.Sizeof(deviceCreateInfo{}), 72},
		"VkBufferCreateInfo":               {unsafe.Sizeof(bufferCreateInfo{}), 56},
		"VkMemoryRequirements":             {unsafe.Sizeof(memoryRequirements{}), 24},
		"VkMemoryAllocateInfo":             {unsafe.Sizeof(memoryAllocateInfo{}), 32},
		"VkDescriptorSetLayoutBinding":     {unsafe.Sizeof(descriptorSetLayoutBinding{}), 24},
		"VkDescriptorSetLayoutCreateInfo":  {unsafe.Sizeof(descriptorSetLayoutCreateInfo{}), 32},
		"VkPushConstantRange":              {unsafe.Sizeof(pushConstantRange{}), 12},
		"VkPipelineLayoutCreateInfo":       {unsafe.Sizeof(pipelineLayoutCreateInfo{}), 48},
		"VkShaderModuleCreateInfo":         {unsafe.Sizeof(shaderModuleCreateInfo{}), 40},
		"VkPipelineShaderStageCreateInfo":  {unsafe.Sizeof(pipelineShaderStageCreateInfo{}), 48},
		"VkComputePipelineCreateInfo":      {unsafe.Sizeof(computePipelineCreateInfo{}), 96},
		"VkDescriptorPoolSize":             {unsafe.Sizeof(descriptorPoolSize{}), 8},
		"VkDescriptorPoolCreateInfo":       {unsafe.Sizeof(descriptorPoolCreateInfo{}), 40},
		"VkDescriptorSetAllocateInfo":      {unsafe.Sizeof(descriptorSetAllocateInfo{}), 40},
		"VkDescriptorBufferInfo":           {unsafe.Sizeof(descriptorBufferInfo{}), 24},
		"VkWriteDescriptorSet":             {unsafe.Sizeof(writeDescriptorSet{}), 64},
		"VkCommandPoolCreateInfo":          {unsafe.Sizeof(commandPoolCreateInfo{}), 24},
		"VkCommandBufferAllocateInfo":      {unsafe.Sizeof(commandBufferAllocateInfo{}), 32},
		"VkCommandBufferBeginInfo":         {unsafe.Sizeof(commandBufferBeginInfo{}), 32},
		"VkBufferCopy":                     {unsafe.Sizeof(bufferCopy{}), 24},
		"VkMemoryBarrier":                  {unsafe.Sizeof(memoryBarrier{}), 24},
		"VkSubmitInfo":                     {unsafe.Sizeof(submitInfo{}), 72},
		"VkFenceCreateInfo":                {unsafe.Sizeof(fenceCreateInfo{}), 24},
	}
	for name, s := range sizes {
		if s[0] != s[1] {
			t.Errorf("%s: %d bytes, C has %d", name, s[0], s[1])
		}
	}
	if off := unsafe.Offsetof(computePipelineCreateInfo{}.layout); off != 72 {
		t.Errorf("VkComputePipelineCreateInfo.layout at %d, C has 72", off)
	}
	if off := unsafe.Offsetof(physicalDeviceMemoryProperties{}.memoryHeaps); off != 264 {
		t.Errorf("VkPhysicalDeviceMemoryProperties.memoryHeaps at %d, C has 264", off)
	}
}

// TestBindFromManyGoroutines binds and frees descriptor sets of one
// pipeline from several goroutines at once, as a Score's threads do when
// their workers are made and freed together, then closes the pipeline.
// Vulkan leaves a descriptor pool's synchronisation to its user: without it
// lavapipe's pool, a list, broke and the process died in the driver, in
// about one pipeline of three here; 30 make that certain.
func TestBindFromManyGoroutines(t *testing.T) {
	d := openOrSkip(t)
	const pipelines, goroutines, rounds, held = 30, 8, 2000, 4
	in, out := newBuffer(t, d, 4096, DeviceLocal), newBuffer(t, d, 8192, DeviceLocal)
	for range pipelines {
		p, err := d.NewPipeline(scaleSPV, 2, 8, goroutines*held)
		if err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, goroutines)
		for range goroutines {
			go func() { errs <- bindAndFree(p, rounds, held, in, out) }()
		}
		for range goroutines {
			if err := <-errs; err != nil {
				t.Errorf("Bind: %v", err)
			}
		}
		p.Close()
	}
}

// bindAndFree binds p's set rounds times, freeing them held at a time.
func bindAndFree(p *Pipeline, rounds, held int, bufs ...*Buffer) error {
	var sets []*DescriptorSet
	defer func() {
		for _, s := range sets {
			s.Close()
		}
	}()
	for range rounds {
		s, err := p.Bind(bufs...)
		if err != nil {
			return err
		}
		sets = append(sets, s)
		if len(sets) == held {
			for _, s := range sets {
				s.Close()
			}
			sets = sets[:0]
		}
	}
	return nil
}

// TestTimestamps writes a timestamp before and after a dispatch and a copy
// of 4 MB: the second is later, by less than a second, and the device's
// period is plausible. A device whose compute queue writes none says so.
func TestTimestamps(t *testing.T) {
	d := openOrSkip(t)
	ts, err := d.NewTimestamps(3)
	if errors.Is(err, ErrNoTimestamps) {
		t.Skipf("%s: %v", d.Info.Name, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	if p := d.Info.TimestampPeriod; p <= 0 || p > 1e6 {
		t.Errorf("TimestampPeriod = %v ns, want a tick between 0 and a millisecond", p)
	}
	const n = 1 << 20
	p, err := d.NewPipeline(scaleSPV, 2, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	in, out := newBuffer(t, d, 4*n, DeviceLocal), newBuffer(t, d, 8*n, DeviceLocal)
	set, err := p.Bind(in, out)
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Begin(); err != nil {
		t.Fatal(err)
	}
	s.ResetTimestamps(ts)
	s.Timestamp(ts, 0)
	s.Fill(in, 0, 4*n, 7)
	s.Barrier()
	push := make([]byte, 8)
	binary.LittleEndian.PutUint32(push, n)
	binary.LittleEndian.PutUint32(push[4:], 3)
	s.Dispatch(p, set, push, (n+63)/64, 1, 1)
	s.Barrier()
	s.Timestamp(ts, 1)
	s.Timestamp(ts, 3) // out of the pool: the submission fails
	if err := s.Submit(); err == nil {
		t.Fatal("a timestamp out of the pool was recorded")
	}
	if err := s.Begin(); err != nil {
		t.Fatal(err)
	}
	s.ResetTimestamps(ts)
	s.Timestamp(ts, 0)
	s.Dispatch(p, set, push, (n+63)/64, 1, 1)
	s.Barrier()
	s.Timestamp(ts, 1)
	if err := s.Submit(); err != nil {
		t.Fatal(err)
	}
	if err := s.Wait(); err != nil {
		t.Fatal(err)
	}
	got, err := ts.Read(2)
	if err != nil {
		t.Fatal(err)
	}
	if d := got[1] - got[0]; d <= 0 || d > 1e9 {
		t.Errorf("timestamps %v: the dispatch took %v ns, want more than 0 and less than a second", got, d)
	}
	if _, err := ts.Read(4); err == nil {
		t.Error("Read(4) of a pool of 3 succeeded")
	}
}

// mapped reports which of the loader's driver libraries are mapped into this
// process: the loader maps a driver's library when vkCreateInstance loads it.
func mapped(t *testing.T, libs ...string) map[string]bool {
	m, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skipf("no /proc/self/maps: %v", err)
	}
	got := map[string]bool{}
	for _, l := range libs {
		got[l] = strings.Contains(string(m), "/"+l)
	}
	return got
}

// TestOpenDrivers runs itself in children, each a process whose loader has loaded no
// driver yet (a driver's library may stay mapped once loaded): with Config.Drivers the
// loader loads only the drivers selected, and the device opened names the selection;
// a selection without a usable device loads every driver instead; the loader's
// variable is set only for the call.
func TestOpenDrivers(t *testing.T) {
	const lvp, radv = "libvulkan_lvp.so", "libvulkan_radeon.so"
	switch os.Getenv("VMAFX_VULKAN_CHILD") {
	case "lvp":
		d, err := Open(Config{Drivers: []string{"*lvp*"}})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if got := d.Steps().Drivers; got != "*lvp*" {
			t.Errorf("Steps().Drivers = %q, want *lvp*", got)
		}
		if got := mapped(t, lvp, radv); !got[lvp] || got[radv] {
			t.Errorf("drivers mapped %v: want lavapipe's alone", got)
		}
		if v, ok := os.LookupEnv("VK_LOADER_DRIVERS_SELECT"); ok {
			t.Errorf("VK_LOADER_DRIVERS_SELECT=%q left set after Open", v)
		}
		return
	case "none":
		d, err := Open(Config{Drivers: []string{"*no-such-driver*"}})
		if err != nil {
			t.Fatalf("Open with a selection that matches nothing: %v, want every driver's device", err)
		}
		defer d.Close()
		if got := d.Steps().Drivers; got != "" {
			t.Errorf("Steps().Drivers = %q, want empty (every driver)", got)
		}
		if got := mapped(t, lvp, radv); !got[lvp] || !got[radv] {
			t.Errorf("drivers mapped %v: want every driver's", got)
		}
		return
	}
	openOrSkip(t).Close() // skips where there is no loader at all
	for _, m := range []string{lvp, radv} {
		if _, err := os.Stat("/usr/lib/x86_64-linux-gnu/" + m); err != nil {
			t.Skipf("needs Mesa's lavapipe and RADV (mesa-vulkan-drivers): %v", err)
		}
	}
	for _, child := range []string{"lvp", "none"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestOpenDrivers$", "-test.v")
		cmd.Env = []string{"VMAFX_VULKAN_CHILD=" + child}
		for _, kv := range os.Environ() {
			if name, _, _ := strings.Cut(kv, "="); !slices.Contains(driverEnv, name) {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "PASS") {
			t.Errorf("child %s: %v\n%s", child, err, out)
		}
	}
}

// TestDriverSelection: a vendor's drivers go to the loader unless the environment
// already chooses them.
func TestDriverSelection(t *testing.T) {
	for _, e := range driverEnv {
		t.Setenv(e, "") // restored after the test
		os.Unsetenv(e)
	}
	if got := driverSelection(VendorDrivers("amd")); got != "*radeon*,*amd*" {
		t.Errorf("amd: %q", got)
	}
	for _, v := range []string{"cpu", "", "other"} {
		if got := driverSelection(VendorDrivers(v)); got != "" {
			t.Errorf("%q: %q, want every driver", v, got)
		}
	}
	for _, e := range driverEnv {
		os.Setenv(e, "/etc/vulkan/icd.d/mine.json")
		if got := driverSelection(VendorDrivers("nvidia")); got != "" {
			t.Errorf("with %s set: %q, want the environment's choice", e, got)
		}
		os.Unsetenv(e)
	}
}

// alignedBytes returns n bytes of Go memory starting at a multiple of a.
func alignedBytes(n int, a uint64) []byte {
	b := make([]byte, n+int(a))
	off := (a - uint64(uintptr(unsafe.Pointer(&b[0])))%a) % a
	return b[off : off+uint64(n) : off+uint64(n)]
}

// TestImportHost has the device copy out of Go memory it imported: what it
// copies is what the memory holds when the copy runs, written after the import
// too, and memory it cannot take is refused with the reason.
func TestImportHost(t *testing.T) {
	d := openOrSkip(t)
	if !d.CanImportHost() {
		if os.Getenv("VMAFX_REQUIRE_VULKAN") == "1" && d.Info.Type == "cpu" {
			t.Fatalf("%s (%s) imports no host memory; lavapipe does (%s)", d.Info.Name, d.Info.Driver, extExternalMemoryHost)
		}
		t.Skipf("%s imports no host memory", d.Info.Name)
	}
	a := d.Info.HostImportAlignment
	t.Logf("%s: host memory imported at multiples of %d bytes", d.Info.Name, a)
	n := int(4 * a)
	mem := alignedBytes(n, a)
	buf, err := d.ImportHost(mem)
	if err != nil {
		t.Fatal(err)
	}
	dev, back := newBuffer(t, d, int64(n), DeviceLocal), newBuffer(t, d, int64(n), Host)
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	up0 := d.Stats().UploadBytes
	for round := range 2 {
		for i := range mem {
			mem[i] = byte(i*31 + round*7)
		}
		if err := s.Begin(); err != nil {
			t.Fatal(err)
		}
		// From an offset inside the memory, as a frame's plane is copied.
		s.Copy(dev, 0, buf, int64(a), int64(n)-int64(a))
		s.Barrier()
		s.Copy(back, 0, dev, 0, int64(n)-int64(a))
		s.Barrier()
		if err := s.Submit(); err != nil {
			t.Fatal(err)
		}
		if err := s.Wait(); err != nil {
			t.Fatal(err)
		}
		if got, want := back.Bytes()[:n-int(a)], mem[a:]; !slices.Equal(got, want) {
			t.Fatalf("round %d: the device copied other bytes than the memory holds", round)
		}
	}
	if got, want := d.Stats().UploadBytes-up0, uint64(2*(n-int(a))); got != want {
		t.Errorf("UploadBytes grew by %d, want %d: copies out of imported memory cross the bus", got, want)
	}
	buf.Close()
	if buf.Bytes() != nil || buf.imported {
		t.Errorf("a closed import still holds the memory")
	}
	mem[0] = 1 // still the caller's

	for _, c := range []struct {
		name string
		mem  []byte
	}{
		{"misaligned start", alignedBytes(n+1, a)[1:]},
		{"size not a multiple", alignedBytes(n+1, a)},
		{"empty", nil},
	} {
		if b, err := d.ImportHost(c.mem); err == nil {
			b.Close()
			t.Errorf("%s: imported", c.name)
		} else if !strings.Contains(err.Error(), "multiples of") {
			t.Errorf("%s: %v, want the alignment named", c.name, err)
		}
	}
}

// BenchmarkImportHost times ImportHost and the buffer's Close on memory the size of
// a Score's frame planes at 1080p 8-bit on one thread (40 planes, about 83 MB), which a
// worker imports once a Score: on a GPU the driver pins its pages.
func BenchmarkImportHost(b *testing.B) {
	d := openOrSkip(b)
	if !d.CanImportHost() {
		b.Skipf("%s imports no host memory", d.Info.Name)
	}
	mem := alignedBytes(40*2076672, 64<<10)
	for i := range mem {
		mem[i] = byte(i)
	}
	for b.Loop() {
		buf, err := d.ImportHost(mem)
		if err != nil {
			b.Fatal(err)
		}
		buf.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/import")
}
