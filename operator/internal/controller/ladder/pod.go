package ladder

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/config"
	"github.com/vmafx/vmafx/operator/internal/workerpod"
)

// A ladder's steps and the file type of its encodes.
const (
	stepEncode     = "encode"
	stepReport     = "report"
	encodeFileType = ".mkv"
)

// EncodePodName is the name of attempt n of a rung's encode Pod.
func EncodePodName(l *vmafxv1.VmafxLadder, rung string, n int32) string {
	return l.Name + "-enc-" + rung + "-" + strconv.Itoa(int(n))
}

// ReportPodName is the name of attempt n of the ladder's report Pod.
func ReportPodName(l *vmafxv1.VmafxLadder, n int32) string {
	return l.Name + "-report-" + strconv.Itoa(int(n))
}

// JobName is the name of the VmafxJob that scores a rung.
func JobName(l *vmafxv1.VmafxLadder, rung string) string { return l.Name + "-" + rung }

// encodeURI is where a rung's encode is written.
func encodeURI(l *vmafxv1.VmafxLadder, rung string) vmafxv1.OutputURI {
	return vmafxv1.JoinOutput(l.Spec.Output, rung+encodeFileType)
}

// readURI is where the scoring job reads an encode written to out: the same object in a
// store; for file:///output/... the same file on the claim mounted at /data (the spec's
// volume and outputVolume are the same PersistentVolumeClaim, which the CRD checks).
func readURI(out vmafxv1.OutputURI) vmafxv1.VideoURI {
	if rest, ok := strings.CutPrefix(string(out), "file://"+vmafxv1.OutputMountPath+"/"); ok {
		return vmafxv1.VideoURI("file://" + vmafxv1.DataMountPath + "/" + rest)
	}
	return vmafxv1.VideoURI(out)
}

// buildPod returns a ladder Pod that runs the worker with args: CPU work, placed by
// vmafx-scheduler like every worker Pod (in the queue by the ladder's priority), with no
// vmafx.dev/slot (slots are scoring capacity, and an encode needs none) and no backend
// annotation, so that the VmafxPlacement plugin leaves it to the profile's default
// plugins (fit to CPU and memory, any node); with the ladder's volumes and credentials.
func buildPod(l *vmafxv1.VmafxLadder, name, step, rung string, n int32, args []string, w config.WorkerConfig) *corev1.Pod {
	resources := w.Resources.DeepCopy()
	delete(resources.Limits, vmafxv1.ResourceSlot)
	delete(resources.Requests, vmafxv1.ResourceSlot)
	if l.Spec.EncodeResources != nil && step == stepEncode {
		resources = l.Spec.EncodeResources.DeepCopy()
	}
	labels := map[string]string{
		vmafxv1.LabelLadder:            vmafxv1.JobLabelValue(l.Name),
		vmafxv1.LabelStep:              step,
		vmafxv1.LabelAttempt:           strconv.Itoa(int(n)),
		"app.kubernetes.io/name":       "vmafx-worker",
		"app.kubernetes.io/managed-by": "vmafx-operator",
	}
	if rung != "" {
		labels[vmafxv1.LabelRung] = rung
	}
	pod := workerpod.New(metav1.ObjectMeta{
		Name: name, Namespace: l.Namespace, Labels: labels,
		// Kept, with the result in its termination message, until the ladder records it.
		Finalizers:      []string{vmafxv1.FinalizerResult},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(l, vmafxv1.GroupVersion.WithKind("VmafxLadder"))},
		Annotations:     map[string]string{vmafxv1.AnnotationPriority: strconv.Itoa(int(l.Spec.Priority))},
	}, w, args, *resources, l.Spec.ActiveDeadlineSeconds)
	pod.Spec.SchedulerName = vmafxv1.SchedulerName
	if v := l.Spec.Volume; v != nil && step == stepEncode {
		// Only a PVC or a CSI volume (the CRD refuses others), attached read-only.
		workerpod.AddDataVolume(pod, v)
	}
	if ov := l.Spec.OutputVolume; ov != nil {
		workerpod.AddOutputVolume(pod, *ov)
	}
	if c := l.Spec.Credentials; c != nil {
		workerpod.AddCredentials(pod, *c)
	}
	return pod
}

// encodeArgs is the vmafx-worker command line of a rung's encode.
func encodeArgs(l *vmafxv1.VmafxLadder, r *vmafxv1.LadderRung) []string {
	e := &vmafxv1.EncodeRequest{Reference: string(l.Spec.Reference), Output: string(encodeURI(l, r.Name)),
		Encoder: r.Encoder, RateControl: r.RateControl, Value: int(r.Value), Width: int(r.Width), Height: int(r.Height)}
	if c := l.Spec.Codec(r.Encoder); c != nil {
		e.Preset = c.Preset
	}
	if w, h := l.Spec.Width, l.Spec.Height; w != nil && h != nil {
		e.RawWidth, e.RawHeight, e.PixelFormat = int(*w), int(*h), string(l.Spec.PixelFormat)
	}
	req := vmafxv1.NewWorkerRequest()
	req.Encode, req.Store = e, workerpod.Store(l.Spec.Credentials, l.Spec.S3)
	return workerpod.Args(req)
}

// reportArgs is the report Pod's command line: the table goes as the request's rungs.
func reportArgs(l *vmafxv1.VmafxLadder) ([]string, error) {
	table := make([]vmafxv1.LadderRung, len(l.Status.Rungs))
	for i, r := range l.Status.Rungs {
		table[i] = vmafxv1.LadderRung{Name: r.Name, Encoder: r.Encoder, RateControl: r.RateControl, Value: r.Value, Height: r.Height, Width: r.Width,
			Phase: r.Phase, Resolution: r.Resolution, Bitrate: r.Bitrate, Bytes: r.Bytes, Score: r.Score, P5: r.P5, WorstFrame: r.WorstFrame, Hull: r.Hull}
	}
	req := vmafxv1.NewWorkerRequest()
	req.LadderReport = &vmafxv1.LadderReportRequest{Output: string(l.Spec.Output), Name: l.Name, Rungs: table}
	req.Store = workerpod.Store(l.Spec.Credentials, l.Spec.S3)
	args := workerpod.Args(req)
	// The CRD bounds the rungs and their strings far below the limit; a table past it
	// would be refused by the worker on every attempt.
	if n := len(args[len(args)-1]); n > vmafxv1.MaxWorkerRequestBytes {
		return nil, fmt.Errorf("the ladder's table is %d bytes as a worker request, more than %d", n, vmafxv1.MaxWorkerRequestBytes)
	}
	return args, nil
}
