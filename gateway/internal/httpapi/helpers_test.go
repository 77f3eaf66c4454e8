package httpapi

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vmafx/vmafx/gateway/internal/access"
	"github.com/vmafx/vmafx/gateway/internal/jobs"
)

func prometheusRegistry() *prometheus.Registry { return prometheus.NewRegistry() }

// refuseAll authenticates nobody.
type refuseAll struct{}

func (refuseAll) Authenticate(context.Context, string) (access.User, error) {
	return access.User{}, access.ErrUnauthenticated
}

func init() { testStore = jobs.New(nil, refuseAll{}) }

var testStore *jobs.Store
