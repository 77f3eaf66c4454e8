package project

import (
	"fmt"
	"os/exec"
	"path"
	"path/filepath"
	"sort"

	"github.com/vmafx/vmafx/hack/release/debroot"
	"github.com/vmafx/vmafx/hack/release/images"
)

// WorkerPackages are the Debian packages the worker's image takes files from: ffmpeg and
// ffprobe, which decode encoded inputs; the Vulkan loader and Mesa's drivers (lavapipe,
// RADV, ANV...); the C library, through which the binary, built without cgo, dlopens
// the loader (purego makes it dynamically linked); and the CA certificates for https://
// inputs. hack/install-deps.sh installs the same on the build machine.
var WorkerPackages = []string{"ffmpeg", "libvulkan1", "mesa-vulkan-drivers", "libc6", "ca-certificates"}

// CABundle is where Debian's CA bundle lies; the worker fetches https:// inputs.
const CABundle = "/etc/ssl/certs/ca-certificates.crt"

// WorkerRuntime is the worker's runtime from the Debian packages unpacked into root,
// for the binary bin (host path) built for root's architecture: ffmpeg and ffprobe, the
// Vulkan loader and every driver manifest with its driver, the C library, each with the
// libraries it loads, the CA bundle, and the copyright file of every package these come
// from; image path to host path.
func WorkerRuntime(root *debroot.Root, bin string) (map[string]string, error) {
	starts := []string{"/usr/bin/ffmpeg", "/usr/bin/ffprobe"}
	loader, err := root.FindLibrary(images.VulkanLoader)
	if err != nil {
		return nil, err
	}
	starts = append(starts, loader)
	manifests, err := filepath.Glob(filepath.Join(root.Dir, images.ICDDir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(manifests) == 0 {
		return nil, fmt.Errorf("no Vulkan drivers in %s", filepath.Join(root.Dir, images.ICDDir))
	}
	sort.Strings(manifests)
	files := map[string]string{}
	for _, m := range manifests {
		lib, err := images.ICDLibrary(m)
		if err != nil {
			return nil, err
		}
		files[path.Join(images.ICDDir, filepath.Base(m))] = m
		starts = append(starts, lib)
	}
	closure, err := root.ELFClosure(starts...)
	if err != nil {
		return nil, err
	}
	own, err := root.Libraries(bin)
	if err != nil {
		return nil, err
	}
	bundle, err := root.CABundle(CABundle)
	if err != nil {
		return nil, err
	}
	files[CABundle] = bundle
	for _, m := range []map[string]string{closure, own} {
		for k, v := range m {
			files[k] = v
		}
	}
	return withCopyrights(root, files)
}

// HostWorkerRuntime is the worker's runtime taken from the build machine's installed
// packages (for the local cluster, whose node is this machine): ffmpeg and ffprobe, the
// Vulkan runtime (images.VulkanRuntime) and the libraries bin loads, resolved with ldd.
func HostWorkerRuntime(bin string) (map[string]string, error) {
	var progs []string
	for _, p := range []string{"ffmpeg", "ffprobe"} {
		found, err := exec.LookPath(p)
		if err != nil {
			return nil, fmt.Errorf("%s is not installed (make deps): the worker image would not decode encoded videos", p)
		}
		progs = append(progs, found)
	}
	files, err := images.ELFDeps(progs...)
	if err != nil {
		return nil, err
	}
	for _, p := range progs {
		files["/usr/bin/"+filepath.Base(p)] = files[p]
	}
	vk, err := images.VulkanRuntime()
	if err != nil {
		return nil, err
	}
	own, err := images.ELFDeps(bin)
	if err != nil {
		return nil, err
	}
	delete(own, bin) // the binary has its own layer
	for _, m := range []map[string]string{vk, own} {
		for k, v := range m {
			files[k] = v
		}
	}
	return files, nil
}

// CARuntime is the CA bundle from the Debian packages unpacked into root (which must hold
// ca-certificates, as WorkerPackages do) with its package's copyright file, for an image
// that is not the worker's but speaks HTTPS (Image.CACerts); image path to host path.
func CARuntime(root *debroot.Root) (map[string]string, error) {
	bundle, err := root.CABundle(CABundle)
	if err != nil {
		return nil, err
	}
	files := map[string]string{CABundle: bundle}
	return withCopyrights(root, files)
}

// withCopyrights adds to files the copyright file of every package they come from.
func withCopyrights(root *debroot.Root, files map[string]string) (map[string]string, error) {
	copyrights, err := root.Copyrights(files)
	if err != nil {
		return nil, err
	}
	for k, v := range copyrights {
		files[k] = v
	}
	return files, nil
}
