package project

import "path/filepath"

// License is the project's SPDX licence expression (LICENSE), the default of the images'
// org.opencontainers.image.licenses annotation and of their SBOMs' main package.
const License = "Apache-2.0"

// LicenseDir is where every image carries the licences of what it holds.
const LicenseDir = "/licenses"

// LicenseFiles are the licence files img carries (image path to host path, repo being the
// repository root): the project's LICENSE and NOTICE and, in the worker's image, the
// licence of the libvmaf model files the binary embeds (the trainer's too). The worker's Debian packages
// bring their own copyright files (WorkerRuntime).
func (img Image) LicenseFiles(repo string) map[string]string {
	files := map[string]string{
		LicenseDir + "/LICENSE": filepath.Join(repo, "LICENSE"),
		LicenseDir + "/NOTICE":  filepath.Join(repo, "NOTICE"),
	}
	if img.Worker || img.CACerts {
		files[LicenseDir+"/vmaf-models/LICENSE"] = filepath.Join(repo, "vmaf", "models", "LICENSE")
	}
	return files
}
