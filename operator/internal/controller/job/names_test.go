package job

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

func TestPodNamesStayValid(t *testing.T) {
	for _, name := range []string{
		"p01",
		strings.Repeat("a", 63),
		strings.Repeat("a", 70),
		strings.Repeat("a", 251),
		strings.Repeat("b", 248) + "." + "cc.d",
		strings.Repeat("a", 253),
	} {
		job := &vmafxv1.VmafxJob{ObjectMeta: metav1.ObjectMeta{Name: name}}
		seen := map[string]bool{}
		for _, n := range []int32{1, 2, 10} {
			pod := PodName(job, n)
			if errs := validation.IsDNS1123Subdomain(pod); len(errs) > 0 {
				t.Errorf("PodName(%d chars, %d) = %q: %v", len(name), n, pod, errs)
			}
			if errs := validation.IsDNS1123Label(hostname(pod)); len(errs) > 0 {
				t.Errorf("hostname(%q) = %q: %v", pod, hostname(pod), errs)
			}
			if seen[pod] {
				t.Errorf("PodName(%d chars) repeats %q", len(name), pod)
			}
			seen[pod] = true
		}
		if len(name) <= 250 && PodName(job, 1) != name+"-1" {
			t.Errorf("PodName(%q, 1) = %q; want the plain <job>-1", name, PodName(job, 1))
		}
	}
}
