package training

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/config"
)

const (
	containerName = "trainer"
	trainerUID    = 65532
	// deploymentPrefix names trainer Deployments: vmafx-trainer-<run>.
	deploymentPrefix = "vmafx-trainer-"
)

// annotationSpecHash on a trainer Deployment is the hash of the spec the operator wrote.
const annotationSpecHash = "vmafx.dev/spec-hash"

// specHash hashes what the operator wants of a Deployment.
func specHash(d *appsv1.Deployment) string {
	data, _ := json.Marshal(struct {
		L map[string]string
		S appsv1.DeploymentSpec
		O []metav1.OwnerReference
	}{d.Labels, d.Spec, d.OwnerReferences})
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// DeploymentName is the name of the trainer Deployment of the run called name: the
// prefix and the name, or for a long name its first characters and a hash, short enough
// for the ReplicaSet and Pod names derived from it.
func DeploymentName(name string) string {
	const max = 47
	if len(deploymentPrefix)+len(name) <= max {
		return deploymentPrefix + name
	}
	sum := sha256.Sum256([]byte(name))
	keep := max - len(deploymentPrefix) - 11
	return deploymentPrefix + strings.TrimRight(name[:keep], "-.") + "-" + hex.EncodeToString(sum[:])[:10]
}

func trainerLabels(tr *vmafxv1.VmafxModelTraining) map[string]string {
	return map[string]string{
		vmafxv1.LabelTraining:    vmafxv1.JobLabelValue(tr.Name),
		vmafxv1.LabelComponent:   "trainer",
		"app.kubernetes.io/name": "vmafx-trainer",
	}
}

// buildDeployment returns the trainer Deployment of tr: one Pod of the trainer image
// (vmafx-trainer), never two at once (Recreate), none while the run is suspended.
func buildDeployment(tr *vmafxv1.VmafxModelTraining, w config.WorkerConfig) *appsv1.Deployment {
	labels := trainerLabels(tr)
	replicas := int32(1)
	if tr.Spec.Suspend {
		replicas = 0
	}
	c := corev1.Container{
		Name:            containerName,
		Image:           w.TrainerImage,
		ImagePullPolicy: w.TrainerPullPolicy,
		Args:            []string{"--training", tr.Namespace + "/" + tr.Name},
		Ports:           []corev1.ContainerPort{{Name: "http", ContainerPort: vmafxv1.TrainerPort, Protocol: corev1.ProtocolTCP}},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: "/healthz", Port: intstr.FromInt32(vmafxv1.TrainerPort)}}, PeriodSeconds: 10},
		LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: "/healthz", Port: intstr.FromInt32(vmafxv1.TrainerPort)}}, PeriodSeconds: 20, FailureThreshold: 3},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
			// The ledger (about 50 bytes per sample) and the held-out samples' features
			// (about 50 bytes per frame) live in memory.
			Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
		},
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			ReadOnlyRootFilesystem:   ptr.To(true),
			RunAsNonRoot:             ptr.To(true),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
		VolumeMounts: []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}},
		// The trainer writes no termination message: the end of its log says why it
		// exited, in the run's TrainerRestarted event and Ready condition.
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
	if len(w.PlainHTTPRegistries) > 0 {
		c.Env = append(c.Env, corev1.EnvVar{Name: vmafxv1.EnvRegistryPlainHTTP, Value: strings.Join(w.PlainHTTPRegistries, ",")})
	}
	volumes := []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	mount := func(name, path string, src corev1.VolumeSource) {
		volumes = append(volumes, corev1.Volume{Name: name, VolumeSource: src})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: name, MountPath: path, ReadOnly: true})
	}
	if rc := tr.Spec.RegistryCredentials; rc != nil {
		// Only the dockerconfigjson key: a Secret of another type lacks it, and the Pod
		// then waits with CreateContainerConfigError, which the run's status shows.
		mount("registry-credentials", vmafxv1.TrainerRegistryCredentialsPath, corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: rc.Name, DefaultMode: ptr.To[int32](0o440),
			Items: []corev1.KeyToPath{{Key: vmafxv1.DockerConfigKey, Path: vmafxv1.DockerConfigKey}},
		}})
	}
	if cr := tr.Spec.DataSource.Credentials; cr != nil {
		mount("credentials", vmafxv1.CredentialsMountPath, corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: cr.SecretRef.Name, DefaultMode: ptr.To[int32](0o440)}})
		c.Args = append(c.Args, "--credentials-dir", vmafxv1.CredentialsMountPath)
	}
	if claim := tr.Spec.DataSource.OutputClaim; claim != "" {
		mount("outputs", vmafxv1.OutputMountPath, corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
			ClaimName: claim, ReadOnly: true}})
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: DeploymentName(tr.Name), Namespace: tr.Namespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			// Two trainers of one run would push the same version twice.
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{
					// A changed spec restarts the trainer, which reads the spec at start.
					"vmafx.dev/training-generation": strconv.FormatInt(tr.Generation, 10),
				}},
				Spec: corev1.PodSpec{
					ServiceAccountName:            w.TrainerServiceAccount,
					EnableServiceLinks:            ptr.To(false),
					TerminationGracePeriodSeconds: ptr.To[int64](30),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](trainerUID), RunAsGroup: ptr.To[int64](trainerUID),
						FSGroup: ptr.To[int64](trainerUID), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{c},
					Volumes:    volumes,
				},
			},
		},
	}
}
