// Package images packs a static binary into a single-layer OCI image without a container
// engine, using go-containerregistry as a library: the layer holds the binary (plus any
// extra files such as CA certificates, and an empty /tmp), the config names the
// entrypoint and a non-root user, and the result is an OCI image layout archived as one
// tar file that `ctr images import` reads, named through the io.containerd.image.name
// annotation.
//
// The output is reproducible: every timestamp is zero and files are added in a fixed
// order, so the same binary always yields the same image digest.
package images
