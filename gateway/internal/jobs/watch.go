package jobs

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/gateway/internal/access"
)

// WatchAll watches the jobs of ns as u from resourceVersion rv (a list's): the console's
// live job list. The API server's RBAC decides (the watch verb), as for every other call.
// The caller stops the watch.
func (s *Store) WatchAll(ctx context.Context, u access.User, ns, rv string) (watch.Interface, error) {
	c, err := s.clients.For(u)
	if err != nil {
		return nil, err
	}
	return c.Watch(ctx, &vmafxv1.VmafxJobList{}, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}})
}
