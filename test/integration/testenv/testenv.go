package testenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"k8s.io/klog/v2"
	"os"
	"path/filepath"
	"runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// Environment variables that steer the harness.
const (
	// envAssets names the folder holding kube-apiserver and etcd (envtest's own variable).
	envAssets = "KUBEBUILDER_ASSETS"
	// envRequire, set by `make test`, turns a missing control plane into a failure
	// instead of a skip, so CI can never pass by skipping the integration tests.
	envRequire = "VMAFX_REQUIRE_INTEGRATION"
)

var (
	// Scheme knows the built-in kinds and the vmafx.dev/v1 kinds.
	Scheme = k8sruntime.NewScheme()

	env       *envtest.Environment
	cfg       *rest.Config
	k8sClient client.Client
)

func init() {
	if err := clientgoscheme.AddToScheme(Scheme); err != nil {
		panic(err)
	}
	if err := vmafxv1.AddToScheme(Scheme); err != nil {
		panic(err)
	}
}

// RepoRoot is the root of the project's work tree.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// Run starts the control plane, runs the package's tests and stops it, then exits. Without
// KUBEBUILDER_ASSETS the tests are skipped with a message, unless VMAFX_REQUIRE_INTEGRATION
// is set (as `make test` does), in which case the package fails.
func Run(m *testing.M) {
	os.Exit(run(m, nil))
}

// RunWith is Run with configure applied to the environment before it starts: more CRDs,
// webhooks of a third-party server the package runs, more API server flags.
func RunWith(m *testing.M, configure func(*envtest.Environment)) {
	os.Exit(run(m, configure))
}

func run(m *testing.M, configure func(*envtest.Environment)) int {
	// Controllers and clients in the test process log through these; go test shows the
	// lines only for a failing package (or with -v).
	logger := zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
	if os.Getenv(envAssets) == "" {
		if os.Getenv(envRequire) != "" {
			fmt.Fprintf(os.Stderr, "testenv: %s is not set; run `make test-bins` and export the folder it prints\n", envAssets)
			return 1
		}
		fmt.Fprintf(os.Stderr, "testenv: SKIP integration tests: %s is not set (`make test` sets it)\n", envAssets)
		return 0
	}
	env = &envtest.Environment{
		CRDDirectoryPaths:        []string{filepath.Join(RepoRoot(), "manifests", "crd")},
		ErrorIfCRDPathMissing:    true,
		Scheme:                   Scheme,
		ControlPlaneStartTimeout: 2 * time.Minute,
		// kube-apiserver can take tens of seconds to drain on SIGTERM on 2 cores.
		ControlPlaneStopTimeout: 2 * time.Minute,
	}
	// Admission that production clusters (OpenShift, hardened ones) enable and whose
	// permission checks RBAC alone does not show: setting blockOwnerDeletion on an owner
	// reference needs the right to update the owner's finalizers.
	env.ControlPlane.GetAPIServer().Configure().Append("enable-admission-plugins", "OwnerReferencesPermissionEnforcement")
	if configure != nil {
		configure(env)
	}
	var err error
	cfg, err = env.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: starting kube-apiserver and etcd from %s: %v\n", os.Getenv(envAssets), err)
		return 1
	}
	// Many controllers and the scheduler share one apiserver in a test: lift the
	// client-side rate limit so tests measure the system, not the throttle.
	cfg.QPS, cfg.Burst = 500, 1000
	k8sClient, err = client.New(cfg, client.Options{Scheme: Scheme})
	code := 1
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
	} else {
		code = m.Run()
	}
	if err := env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "testenv: stopping the control plane: %v\n", err)
	}
	return code
}

// Config returns a copy of the admin rest.Config of the running apiserver.
func Config() *rest.Config { return rest.CopyConfig(cfg) }

// Client returns an uncached client of the running apiserver.
func Client() client.Client { return k8sClient }

// Environment returns the running envtest environment.
func Environment() *envtest.Environment { return env }

// Context returns a context cancelled when the test ends.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}

// CreateNamespace creates a namespace with a generated name for one test and deletes it
// when the test ends. (envtest runs no namespace controller, so objects inside are not
// garbage collected; tests must not rely on that.)
func CreateNamespace(t testing.TB) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "vmafx-test-"}}
	if err := k8sClient.Create(context.Background(), ns); err != nil {
		t.Fatalf("creating test namespace: %v", err)
	}
	t.Cleanup(func() {
		if err := k8sClient.Delete(context.Background(), ns); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting test namespace %s: %v", ns.Name, err)
		}
	})
	return ns.Name
}

// ApplyFile creates every object of a multi-document YAML file (one that exists already is
// left as it is), as `kubectl create -f` would.
func ApplyFile(ctx context.Context, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		var obj unstructured.Unstructured
		if err := dec.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("%s: %w", path, err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		if err := k8sClient.Create(ctx, &obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s: creating %s %s: %w", path, obj.GetKind(), obj.GetName(), err)
		}
	}
}
