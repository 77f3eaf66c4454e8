package modelregistry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
	"oras.land/oras-go/v2/registry/remote/errcode"
	"oras.land/oras-go/v2/registry/remote/retry"
)

// Media types and annotations of a model version.
const (
	// ArtifactType is the manifest's artifactType.
	ArtifactType = "application/vnd.vmafx.model.v1"
	// ModelMediaType is the layer holding the libvmaf JSON model.
	ModelMediaType = "application/vnd.vmafx.model.libvmaf.v1+json"
	// StateMediaType is the layer holding the trainer's resumable state.
	StateMediaType = "application/vnd.vmafx.training.state.v1+json"

	AnnotationBaseModel      = "dev.vmafx.model.base"
	AnnotationBaseModelSHA   = "dev.vmafx.model.base-sha256"
	AnnotationSamples        = "dev.vmafx.training.samples"
	AnnotationTrainingError  = "dev.vmafx.training.error"
	AnnotationHeldOutError   = "dev.vmafx.training.held-out-error"
	AnnotationBaseHeldOutErr = "dev.vmafx.training.base-held-out-error"
	AnnotationRun            = "dev.vmafx.training.run"
)

// Size limits of what is fetched: a model is about 30 KiB, a state grows with the
// held-out samples and the ledger.
const (
	maxManifest = 4 << 20
	maxModel    = 16 << 20
	maxState    = 512 << 20
)

// ErrNotModel reports an artifact that is not a VMAFX model version.
var ErrNotModel = errors.New("not a VMAFX model artifact")

// Client reaches registries.
type Client struct {
	// PlainHTTP lists the registries (host[:port]) reached over plain HTTP.
	PlainHTTP []string
	// Credentials, when not nil, answers the registries' logins (a Docker config's auths).
	Credentials credentials.Store
	// Timeout bounds each call (Pull, Push, Tags) as a whole, its retries included;
	// 0: DefaultTimeout. A registry that accepts a connection and never answers would
	// otherwise hold a worker, or the trainer, forever.
	Timeout time.Duration
	// Transport, when not nil, carries the requests instead of the shared bounded
	// transport (still under oras' retries). Tests use it to reach a registry that a
	// run names by its public name (ghcr.io) at a local server.
	Transport http.RoundTripper
}

// Timeouts of registry calls: a whole call, and the steps of each request.
const (
	DefaultTimeout        = 5 * time.Minute
	dialTimeout           = 10 * time.Second
	tlsHandshakeTimeout   = 10 * time.Second
	responseHeaderTimeout = 30 * time.Second
)

// httpClient is shared by every registry call: net/http's defaults but for bounded
// connects, handshakes and waits for a response's headers, under oras' retries.
var httpClient = func() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = tlsHandshakeTimeout
	t.ResponseHeaderTimeout = responseHeaderTimeout
	return &http.Client{Transport: retry.NewTransport(t)}
}()

// bound returns ctx limited to the client's Timeout.
func (c *Client) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	d := c.Timeout
	if d <= 0 {
		d = DefaultTimeout
	}
	return context.WithTimeout(ctx, d)
}

// LoadDockerConfig reads a Docker config file (the .dockerconfigjson key of a Secret of
// type kubernetes.io/dockerconfigjson, or ~/.docker/config.json) into a credential store.
func LoadDockerConfig(path string) (credentials.Store, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	store, err := credentials.NewMemoryStoreFromDockerConfig(data)
	if err != nil {
		return nil, fmt.Errorf("registry credentials %s: %w", path, err)
	}
	return store, nil
}

func (c *Client) repository(m Reference) (*remote.Repository, error) {
	repo, err := remote.NewRepository(m.Registry + "/" + m.Repository)
	if err != nil {
		return nil, err
	}
	repo.PlainHTTP = slices.Contains(c.PlainHTTP, m.Registry)
	hc := httpClient
	if c.Transport != nil {
		hc = &http.Client{Transport: retry.NewTransport(c.Transport)}
	}
	client := &auth.Client{Client: hc, Cache: auth.NewCache(), Header: http.Header{"User-Agent": {"vmafx"}}}
	if c.Credentials != nil {
		client.Credential = credentials.Credential(c.Credentials)
	}
	repo.Client = client
	return repo, nil
}

// Version is a model version to push.
type Version struct {
	// Tag names the version in the repository.
	Tag string
	// Model is the libvmaf JSON model; State the trainer's state (optional).
	Model, State []byte
	// Annotations go on the manifest.
	Annotations map[string]string
}

// Push uploads v to repository repo (Reference ignored) and tags it; it returns the
// manifest's digest.
func (c *Client) Push(ctx context.Context, repo Reference, v Version) (string, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	r, err := c.repository(repo)
	if err != nil {
		return "", err
	}
	modelDesc, err := oras.PushBytes(ctx, r, ModelMediaType, v.Model)
	if err != nil {
		return "", fmt.Errorf("pushing the model to %s/%s: %w", repo.Registry, repo.Repository, err)
	}
	modelDesc.Annotations = map[string]string{ocispec.AnnotationTitle: v.Tag + ".json"}
	layers := []ocispec.Descriptor{modelDesc}
	if v.State != nil {
		stateDesc, err := oras.PushBytes(ctx, r, StateMediaType, v.State)
		if err != nil {
			return "", fmt.Errorf("pushing the training state to %s/%s: %w", repo.Registry, repo.Repository, err)
		}
		layers = append(layers, stateDesc)
	}
	ann := map[string]string{ocispec.AnnotationVersion: v.Tag}
	for k, val := range v.Annotations {
		ann[k] = val
	}
	desc, err := oras.PackManifest(ctx, r, oras.PackManifestVersion1_1, ArtifactType, oras.PackManifestOptions{
		Layers: layers, ManifestAnnotations: ann,
	})
	if err != nil {
		return "", fmt.Errorf("pushing the manifest to %s/%s: %w", repo.Registry, repo.Repository, err)
	}
	if err := r.Tag(ctx, desc, v.Tag); err != nil {
		return "", fmt.Errorf("tagging %s/%s:%s: %w", repo.Registry, repo.Repository, v.Tag, err)
	}
	return desc.Digest.String(), nil
}

// Artifact is a pulled model version.
type Artifact struct {
	// Digest is the manifest's digest.
	Digest string
	// Model is the libvmaf JSON model; State the trainer's state, nil unless asked for and
	// present.
	Model, State []byte
	// Annotations are the manifest's.
	Annotations map[string]string
}

// Pull fetches the model version ref (a tag or a digest), with its state when withState.
// Every blob is checked against its digest.
func (c *Client) Pull(ctx context.Context, ref Reference, withState bool) (*Artifact, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	r, err := c.repository(ref)
	if err != nil {
		return nil, err
	}
	desc, err := r.Resolve(ctx, ref.Reference)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", ref, err)
	}
	if desc.Size > maxManifest {
		return nil, fmt.Errorf("%s: manifest of %d bytes: %w", ref, desc.Size, ErrNotModel)
	}
	data, err := content.FetchAll(ctx, r, desc)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", ref, err)
	}
	var man ocispec.Manifest
	if err := json.Unmarshal(data, &man); err != nil {
		return nil, fmt.Errorf("%s: %w: %w", ref, ErrNotModel, err)
	}
	if man.ArtifactType != ArtifactType {
		return nil, fmt.Errorf("%s has artifactType %q, want %s: %w", ref, man.ArtifactType, ArtifactType, ErrNotModel)
	}
	a := &Artifact{Digest: desc.Digest.String(), Annotations: man.Annotations}
	for _, l := range man.Layers {
		switch {
		case l.MediaType == ModelMediaType && a.Model == nil:
			if l.Size > maxModel {
				return nil, fmt.Errorf("%s: model of %d bytes: %w", ref, l.Size, ErrNotModel)
			}
			if a.Model, err = content.FetchAll(ctx, r, l); err != nil {
				return nil, fmt.Errorf("fetching the model of %s: %w", ref, err)
			}
		case l.MediaType == StateMediaType && withState && a.State == nil:
			if l.Size > maxState {
				return nil, fmt.Errorf("%s: state of %d bytes is over the limit", ref, l.Size)
			}
			if a.State, err = content.FetchAll(ctx, r, l); err != nil {
				return nil, fmt.Errorf("fetching the training state of %s: %w", ref, err)
			}
		}
	}
	if a.Model == nil {
		return nil, fmt.Errorf("%s has no %s layer: %w", ref, ModelMediaType, ErrNotModel)
	}
	return a, nil
}

// Tags returns the tags of repo that start with prefix.
func (c *Client) Tags(ctx context.Context, repo Reference, prefix string) ([]string, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	r, err := c.repository(repo)
	if err != nil {
		return nil, err
	}
	var out []string
	err = r.Tags(ctx, "", func(tags []string) error {
		for _, t := range tags {
			if strings.HasPrefix(t, prefix) {
				out = append(out, t)
			}
		}
		return nil
	})
	if err != nil {
		// A repository nothing was pushed to yet answers 404 NAME_UNKNOWN.
		var resp *errcode.ErrorResponse
		if errors.As(err, &resp) && resp.StatusCode == http.StatusNotFound {
			return nil, nil
		}
		return nil, fmt.Errorf("listing the tags of %s/%s: %w", repo.Registry, repo.Repository, err)
	}
	return out, nil
}
