package job

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// PodName is the name of the worker Pod for attempt n of job: <job>-<n>. A job name
// too long for that (names may have 253 characters, as the Pod's) is shortened and given
// a hash of the full name, so the name stays deterministic, unique in practice and valid.
func PodName(job *vmafxv1.VmafxJob, n int32) string {
	return podName(job, "-"+strconv.Itoa(int(n)))
}

// podName is the name of a worker Pod of job: the job's name and suffix, shortened as
// PodName says.
func podName(job *vmafxv1.VmafxJob, suffix string) string {
	if len(job.Name)+len(suffix) <= validation.DNS1123SubdomainMaxLength {
		return job.Name + suffix
	}
	sum := sha256.Sum256([]byte(job.Name))
	hash := "-" + hex.EncodeToString(sum[:])[:10]
	prefix := trimName(job.Name[:validation.DNS1123SubdomainMaxLength-len(hash)-len(suffix)])
	return prefix + hash + suffix
}

// hostname is the worker container's host name for a Pod called pod: the kubelet would
// otherwise use the Pod's name, cut to 63 characters and with any dots, which a DNS label
// must not have.
func hostname(pod string) string {
	h := strings.ReplaceAll(pod, ".", "-")
	if len(h) > validation.DNS1123LabelMaxLength {
		h = h[:validation.DNS1123LabelMaxLength]
	}
	return trimName(h)
}

// trimName drops the characters a name must not end with.
func trimName(s string) string { return strings.TrimRight(s, "-.") }
