package scenarios

import (
	"context"
	"fmt"
	"github.com/vmafx/vmafx/internal/testutil"
	"os"
	"os/exec"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// Environment variables `make e2e` sets.
const (
	envE2E     = "VMAFX_E2E"
	envKubectl = "VMAFX_KUBECTL"
)

var (
	scheme = k8sruntime.NewScheme()
	// c talks to the local cluster as its administrator.
	c client.Client
	// nodeName is the local cluster's one node.
	nodeName string
)

func TestMain(m *testing.M) {
	if os.Getenv(envE2E) == "" {
		fmt.Fprintf(os.Stderr, "scenarios: SKIP: %s is not set (`make e2e` sets it, after bringing the cluster up and deploying)\n", envE2E)
		os.Exit(0)
	}
	if err := setup(); err != nil {
		fmt.Fprintf(os.Stderr, "scenarios: %v\n", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func setup() error {
	for _, add := range []func(*k8sruntime.Scheme) error{clientgoscheme.AddToScheme, vmafxv1.AddToScheme, apiextensionsv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules() // $KUBECONFIG
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, nil).ClientConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	if c, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	var nodes corev1.NodeList
	if err := c.List(context.Background(), &nodes); err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	if len(nodes.Items) != 1 {
		return fmt.Errorf("the local cluster has %d nodes, want 1", len(nodes.Items))
	}
	nodeName = nodes.Items[0].Name
	return nil
}

// eventually calls f until it returns nil or timeout passes, then fails the test with
// f's last error (the project's one bounded wait, internal/testutil).
var eventually = testutil.Eventually

// kubectl runs the kubectl built from module sources, as a user would.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	bin := os.Getenv(envKubectl)
	if bin == "" {
		bin = "kubectl"
	}
	out, err := exec.CommandContext(t.Context(), bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
