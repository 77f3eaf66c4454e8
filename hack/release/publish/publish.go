// Package publish pushes a release to an OCI registry with go-containerregistry: each
// image as one multi-architecture index, each image's SBOM as an OCI referrer artifact
// whose subject is the image, and the Helm chart as Helm's OCI artifact. Credentials come
// from the Docker config file (~/.docker/config.json, $DOCKER_CONFIG, credential helpers)
// or from REGISTRY_USERNAME and REGISTRY_PASSWORD.
package publish

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Platform is one image of an index.
type Platform struct {
	Platform v1.Platform
	Image    v1.Image
}

// Index returns the multi-architecture index of images, with annotations.
func Index(images []Platform, annotations map[string]string) v1.ImageIndex {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range images {
		plat := p.Platform
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: p.Image, Descriptor: v1.Descriptor{Platform: &plat}})
	}
	if len(annotations) > 0 {
		idx = mutate.Annotations(idx, annotations).(v1.ImageIndex)
	}
	return idx
}

// Options returns the remote options for pushes: ctx, and credentials from the
// environment (REGISTRY_USERNAME and REGISTRY_PASSWORD, for any registry) before the
// Docker config file.
func Options(ctx context.Context) []remote.Option {
	return []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.NewMultiKeychain(envKeychain{}, authn.DefaultKeychain))}
}

// envKeychain answers with REGISTRY_USERNAME and REGISTRY_PASSWORD when both are set.
type envKeychain struct{}

func (envKeychain) Resolve(authn.Resource) (authn.Authenticator, error) {
	u, p := os.Getenv("REGISTRY_USERNAME"), os.Getenv("REGISTRY_PASSWORD")
	if u == "" || p == "" {
		return authn.Anonymous, nil
	}
	return authn.FromConfig(authn.AuthConfig{Username: u, Password: p}), nil
}

// Blob is one layer of an artifact.
type Blob struct {
	MediaType   types.MediaType
	Data        []byte
	Annotations map[string]string
}

// Artifact is an OCI 1.1 artifact manifest: a config blob (the empty one when Config is
// nil), layers, an optional subject (the image it refers to) and annotations.
type Artifact struct {
	ArtifactType    string
	ConfigMediaType types.MediaType
	Config          []byte
	Layers          []Blob
	Subject         *v1.Descriptor
	Annotations     map[string]string
}

// emptyConfig is OCI's empty descriptor's content, the config of artifacts that have none.
var emptyConfig = []byte("{}")

// Manifest returns the artifact's manifest and its blobs (config first).
func (a Artifact) Manifest() ([]byte, []Blob, error) {
	cfg := Blob{MediaType: a.ConfigMediaType, Data: a.Config}
	if a.Config == nil {
		cfg = Blob{MediaType: "application/vnd.oci.empty.v1+json", Data: emptyConfig}
	}
	desc := func(b Blob) (v1.Descriptor, error) {
		h, n, err := v1.SHA256(bytesReader(b.Data))
		return v1.Descriptor{MediaType: b.MediaType, Digest: h, Size: n, Annotations: b.Annotations}, err
	}
	m := v1.Manifest{SchemaVersion: 2, MediaType: types.OCIManifestSchema1, Subject: a.Subject, Annotations: a.Annotations}
	var err error
	if m.Config, err = desc(cfg); err != nil {
		return nil, nil, err
	}
	for _, l := range a.Layers {
		d, err := desc(l)
		if err != nil {
			return nil, nil, err
		}
		m.Layers = append(m.Layers, d)
	}
	raw, err := json.Marshal(struct {
		v1.Manifest
		ArtifactType string `json:"artifactType,omitempty"`
	}{m, a.ArtifactType})
	if err != nil {
		return nil, nil, err
	}
	return raw, append([]Blob{cfg}, a.Layers...), nil
}

// rawManifest is a manifest pushed as is.
type rawManifest []byte

func (r rawManifest) RawManifest() ([]byte, error)        { return r, nil }
func (r rawManifest) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }

// PushArtifact pushes a's blobs and manifest to repo, tagged tag (untagged when tag is
// empty), and returns the manifest's descriptor. A registry without the referrers API
// gets the subject's fallback tag (sha256-<digest>) updated.
func PushArtifact(repo name.Repository, tag string, a Artifact, opts ...remote.Option) (v1.Descriptor, error) {
	raw, blobs, err := a.Manifest()
	if err != nil {
		return v1.Descriptor{}, err
	}
	for _, b := range blobs {
		if err := remote.WriteLayer(repo, static.NewLayer(b.Data, b.MediaType), opts...); err != nil {
			return v1.Descriptor{}, fmt.Errorf("pushing a %s blob to %s: %w", b.MediaType, repo, err)
		}
	}
	h, n, err := v1.SHA256(bytesReader(raw))
	if err != nil {
		return v1.Descriptor{}, err
	}
	var ref name.Reference = repo.Digest(h.String())
	if tag != "" {
		ref = repo.Tag(tag)
	}
	if err := remote.Put(ref, rawManifest(raw), opts...); err != nil {
		return v1.Descriptor{}, fmt.Errorf("pushing the manifest to %s: %w", ref, err)
	}
	return v1.Descriptor{MediaType: types.OCIManifestSchema1, Digest: h, Size: n, ArtifactType: a.ArtifactType}, nil
}
