package images

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// ICDDir is where Debian's Mesa (mesa-vulkan-drivers) installs its Vulkan driver
// manifests, and where the loader looks for them.
const ICDDir = "/usr/share/vulkan/icd.d"

// VulkanLoader is the loader's soname, which the worker dlopens.
const VulkanLoader = "libvulkan.so.1"

// VulkanRuntime returns what the worker's Vulkan backend needs in an image, as image path
// to host path: the loader (libvulkan1), every driver manifest in ICDDir (lavapipe, RADV,
// ANV, hasvk on Debian bookworm) with the driver library it names, and the libraries they
// load (LLVM for lavapipe). NVIDIA's driver is not among them: the NVIDIA container
// runtime mounts its ICD and manifest into the container.
func VulkanRuntime() (map[string]string, error) {
	loader := ""
	for _, dir := range []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"} {
		if _, err := os.Stat(filepath.Join(dir, VulkanLoader)); err == nil {
			loader = filepath.Join(dir, VulkanLoader)
			break
		}
	}
	if loader == "" {
		return nil, fmt.Errorf("%s is not installed (apt-get install libvulkan1 mesa-vulkan-drivers): the worker image would have no Vulkan backend", VulkanLoader)
	}
	manifests, err := filepath.Glob(filepath.Join(ICDDir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(manifests) == 0 {
		return nil, fmt.Errorf("no Vulkan drivers in %s (apt-get install mesa-vulkan-drivers)", ICDDir)
	}
	sort.Strings(manifests)
	libs := []string{loader}
	files := map[string]string{}
	for _, m := range manifests {
		lib, err := ICDLibrary(m)
		if err != nil {
			return nil, err
		}
		files[m] = m
		libs = append(libs, lib)
	}
	deps, err := ELFDeps(libs...)
	if err != nil {
		return nil, err
	}
	for k, v := range deps {
		files[k] = v
	}
	return files, nil
}

// ICDLibrary returns the absolute driver library path a manifest names.
func ICDLibrary(manifest string) (string, error) {
	data, err := os.ReadFile(manifest)
	if err != nil {
		return "", err
	}
	var m struct {
		ICD struct {
			LibraryPath string `json:"library_path"`
		} `json:"ICD"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return "", fmt.Errorf("%s: %w", manifest, err)
	}
	if !filepath.IsAbs(m.ICD.LibraryPath) {
		return "", fmt.Errorf("%s: library_path %q is not absolute", manifest, m.ICD.LibraryPath)
	}
	return m.ICD.LibraryPath, nil
}
