package modelregistry

import (
	"context"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/registry/remote"
)

// pushOther pushes an artifact of another type and returns its digest.
func pushOther(ctx context.Context, r *remote.Repository) (string, error) {
	layer, err := oras.PushBytes(ctx, r, "text/plain", []byte("hello"))
	if err != nil {
		return "", err
	}
	desc, err := oras.PackManifest(ctx, r, oras.PackManifestVersion1_1, "application/vnd.example.other", oras.PackManifestOptions{Layers: []ocispec.Descriptor{layer}})
	if err != nil {
		return "", err
	}
	return desc.Digest.String(), nil
}
