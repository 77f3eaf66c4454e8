package ladder

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/config"
)

// Names inside a ladder's Pods, as in the worker Pods of VmafxJobs.
const (
	containerName  = "worker"
	scratchVolume  = "scratch"
	scratchPath    = "/tmp"
	dataVolume     = "data"
	outputVolume   = "output"
	credentials    = "credentials"
	workerUID      = 65532
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

// buildPod returns a ladder Pod that runs the worker with args: CPU work, placed by the
// default scheduler (no schedulerName, no vmafx.dev/slot: slots are scoring capacity,
// and an encode needs none), with the ladder's volumes and credentials.
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
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: l.Namespace, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(l, vmafxv1.GroupVersion.WithKind("VmafxLadder"))},
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			ActiveDeadlineSeconds:         l.Spec.ActiveDeadlineSeconds,
			AutomountServiceAccountToken:  ptr.To(false),
			ServiceAccountName:            w.ServiceAccount,
			EnableServiceLinks:            ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](10),
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](workerUID), RunAsGroup: ptr.To[int64](workerUID), FSGroup: ptr.To[int64](workerUID),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name: containerName, Image: w.Image, ImagePullPolicy: w.PullPolicy, Args: args, Resources: *resources,
				TerminationMessagePath:   "/dev/termination-log",
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true), RunAsNonRoot: ptr.To(true),
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
				VolumeMounts: []corev1.VolumeMount{{Name: scratchVolume, MountPath: scratchPath}},
			}},
			// The spooled reference and the encode before its upload live in the scratch
			// volume; its size limit makes the kubelet evict a runaway Pod, not fill the node.
			Volumes: []corev1.Volume{{Name: scratchVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
				SizeLimit: ptr.To(resource.MustParse("21Gi")),
			}}}},
		},
	}
	add := func(name string, src corev1.VolumeSource, path string, readOnly bool) {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: name, VolumeSource: src})
		c := &pod.Spec.Containers[0]
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: name, MountPath: path, ReadOnly: readOnly})
	}
	if v := l.Spec.Volume; v != nil && step == stepEncode {
		// Only a PVC or a CSI volume (the CRD refuses others), attached read-only.
		src := v.DeepCopy()
		if src.PersistentVolumeClaim != nil {
			src.PersistentVolumeClaim.ReadOnly = true
		}
		if src.CSI != nil {
			src.CSI.ReadOnly = ptr.To(true)
		}
		add(dataVolume, corev1.VolumeSource{PersistentVolumeClaim: src.PersistentVolumeClaim, CSI: src.CSI}, vmafxv1.DataMountPath, true)
	}
	if ov := l.Spec.OutputVolume; ov != nil {
		pvc := ov.PersistentVolumeClaim
		pvc.ReadOnly = false
		add(outputVolume, corev1.VolumeSource{PersistentVolumeClaim: &pvc}, vmafxv1.OutputMountPath, false)
	}
	if c := l.Spec.Credentials; c != nil {
		add(credentials, corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: c.SecretRef.Name, DefaultMode: ptr.To[int32](0o440)}},
			vmafxv1.CredentialsMountPath, true)
	}
	return pod
}

// storeArgs are the object store flags of the ladder's Pods; never credentials, which
// reach the worker as the files of spec.credentials' Secret.
func storeArgs(l *vmafxv1.VmafxLadder) []string {
	var args []string
	if l.Spec.Credentials != nil {
		args = append(args, "--credentials-dir", vmafxv1.CredentialsMountPath)
	}
	if o := l.Spec.S3; o != nil {
		if o.Endpoint != "" {
			args = append(args, "--s3-endpoint", o.Endpoint)
		}
		if o.Region != "" {
			args = append(args, "--s3-region", o.Region)
		}
		if o.PathStyle {
			args = append(args, "--s3-path-style")
		}
	}
	return args
}

// encodeArgs is the vmafx-worker command line of a rung's encode.
func encodeArgs(l *vmafxv1.VmafxLadder, r *vmafxv1.LadderRung) []string {
	args := []string{stepEncode, "--reference", string(l.Spec.Reference), "--output", string(encodeURI(l, r.Name)),
		"--encoder", string(r.Encoder), "--rate-control", string(r.RateControl), "--value", strconv.Itoa(int(r.Value)),
		"--height", strconv.Itoa(int(r.Height))}
	if r.Width > 0 {
		args = append(args, "--width", strconv.Itoa(int(r.Width)))
	}
	if c := l.Spec.Codec(r.Encoder); c != nil && c.Preset != "" {
		args = append(args, "--preset", c.Preset)
	}
	if w, h := l.Spec.Width, l.Spec.Height; w != nil && h != nil {
		args = append(args, "--raw-width", strconv.Itoa(int(*w)), "--raw-height", strconv.Itoa(int(*h)))
		if l.Spec.PixelFormat != "" {
			args = append(args, "--pixel-format", string(l.Spec.PixelFormat))
		}
	}
	return append(args, storeArgs(l)...)
}
