package scale

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/vmafx/vmafx/test/integration/testenv"
)

// profileSeconds is how long a CPU profile of the API server samples.
const profileSeconds = 20

// profileAPIServer starts one CPU profile of kube-apiserver (its /debug/pprof, open to the
// admin user) and writes it to
// dir/apiserver-round<round>.pprof: `go tool pprof -top` on it shows where the API server's
// CPU per job goes. It does nothing without dir (VMAFX_SCALE_PROFILE).
func profileAPIServer(b *testing.B, ctx context.Context, dir string, round int) {
	b.Helper()
	if dir == "" {
		return
	}
	cs, err := kubernetes.NewForConfig(testenv.Config())
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, fmt.Sprintf("apiserver-round%d.pprof", round))
	go func() {
		data, err := cs.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").
			Param("seconds", strconv.Itoa(profileSeconds)).Timeout(2 * profileSeconds * time.Second).DoRaw(ctx)
		if err == nil {
			err = os.WriteFile(path, data, 0o644)
		}
		if err != nil {
			b.Logf("round %d: no API server profile: %v", round, err)
			return
		}
		b.Logf("round %d: API server CPU profile (%d s) in %s", round, profileSeconds, path)
	}()
}
