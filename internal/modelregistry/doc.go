// Package modelregistry stores VMAF model versions in OCI registries as OCI artifacts
// (oras-go): the trainer pushes each checkpoint, the worker pulls the model a job names
// by an oci:// reference.
//
// An artifact is an OCI image manifest (version 1.1) of artifactType ArtifactType with an
// empty config and up to two layers: the libvmaf JSON model (ModelMediaType), which
// libvmaf, ffmpeg's libvmaf filter and our worker read as they are, and the trainer's
// resumable state (StateMediaType), which holds the parameters, the held-out samples and
// the ledger of the samples counted. The manifest's annotations name the base model, the
// sample count and the errors, so `oras manifest fetch` shows what a version is.
package modelregistry
