package command

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"oras.land/oras-go/v2/errdef"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/modelregistry"
	"github.com/vmafx/vmafx/media/fetch"
	"github.com/vmafx/vmafx/vmaf"
)

// loadModel returns the model cfg names: built in, a file, or a model version pulled from
// an OCI registry (oci://...), named by its reference. A registry that answers that the
// version does not exist, or an artifact that is not a model, is BadModel (no retry
// helps); a registry that cannot be reached is FetchFailed.
func loadModel(ctx context.Context, cfg *scoreConfig) (*vmaf.Model, error) {
	if !vmafxv1.ModelReference(cfg.model).IsOCI() {
		return vmaf.LoadModel(cfg.model)
	}
	ref, err := modelregistry.ParseReference(cfg.model)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", vmaf.ErrUnknownModel, err)
	}
	client := &modelregistry.Client{PlainHTTP: cfg.registryPlainHTTP}
	if cfg.store.CredentialsDir != "" {
		path := filepath.Join(cfg.store.CredentialsDir, vmafxv1.DockerConfigKey)
		if _, err := os.Stat(path); err == nil {
			if client.Credentials, err = modelregistry.LoadDockerConfig(path); err != nil {
				return nil, fmt.Errorf("%w: %w", vmaf.ErrBadModel, err)
			}
		}
	}
	a, err := client.Pull(ctx, ref, false)
	switch {
	case errors.Is(err, errdef.ErrNotFound):
		return nil, fmt.Errorf("%w: %s: %w", vmaf.ErrUnknownModel, cfg.model, err)
	case errors.Is(err, modelregistry.ErrNotModel):
		return nil, fmt.Errorf("%w: %w", vmaf.ErrBadModel, err)
	case err != nil:
		return nil, &fetch.Error{URI: cfg.model, Err: err}
	}
	return vmaf.ParseModel(a.Model, cfg.model)
}
