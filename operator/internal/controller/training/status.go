package training

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/internal/text"
	"github.com/vmafx/vmafx/operator/internal/attempt"
)

// setStatus derives the run's status from what was observed: the trainer's own report
// when it answers, else the trainer Pod's state.
func setStatus(tr *vmafxv1.VmafxModelTraining, obs observed) {
	s := &tr.Status
	s.Trainer = obs.deployment
	s.TrainerRestarts = 0
	if obs.pod != nil {
		s.TrainerRestarts, _ = lastExit(obs.pod)
	}
	ready := metav1.Condition{Type: vmafxv1.TrainingReady, Status: metav1.ConditionFalse, ObservedGeneration: tr.Generation}
	switch {
	case tr.Spec.Suspend:
		s.Phase = vmafxv1.TrainingStopped
		ready.Reason, ready.Message = vmafxv1.ReasonSuspended, "spec.suspend is set: the trainer is stopped; its model versions stay in the registry and it resumes from the last one"
	case obs.trainer != nil:
		t := obs.trainer
		s.Phase = t.Phase
		s.Samples, s.HeldOutSamples, s.SkippedJobs = t.Samples, t.HeldOut, t.SkippedJobs
		s.TrainingError, s.HeldOutError, s.BaseHeldOutError = t.TrainingError, t.HeldOutError, t.BaseHeldOutError
		if t.LastCheckpoint != nil {
			s.ModelVersion, s.LastCheckpoint = t.ModelVersion, t.LastCheckpoint.DeepCopy()
		}
		ready.Reason, ready.Message = t.Reason, t.Message
		if t.Phase == vmafxv1.TrainingRunning {
			ready.Status = metav1.ConditionTrue
		}
		if t.PublishReason != "" {
			pub := metav1.Condition{Type: vmafxv1.TrainingCheckpointPublished, Status: metav1.ConditionFalse,
				Reason: t.PublishReason, Message: t.PublishMessage, ObservedGeneration: tr.Generation}
			if t.PublishReason == vmafxv1.ReasonPublished {
				pub.Status = metav1.ConditionTrue
			}
			meta.SetStatusCondition(&s.Conditions, pub)
		}
	default:
		// A trainer that runs but did not answer this once keeps its phase; one that is
		// not running (yet, or again: the kubelet restarts it) is starting.
		if s.Phase == "" || s.Phase == vmafxv1.TrainingStopped || obs.pod == nil || obs.pod.Status.Phase != corev1.PodRunning || !trainerRunning(obs.pod) {
			s.Phase = vmafxv1.TrainingInitializing
		}
		ready.Reason, ready.Message = notAnswering(obs)
	}
	if ready.Message == "" {
		ready.Message = ready.Reason
	}
	meta.SetStatusCondition(&s.Conditions, ready)
	s.ObservedGeneration = tr.Generation
}

// notAnswering says why the trainer does not report, from its Deployment and Pod: the
// API server refuses its Pod, the kubelet restarts it after an exit, or it starts.
func notAnswering(obs observed) (reason, message string) {
	p := obs.pod
	switch {
	case obs.refused != "" && (p == nil || p.Status.Phase != corev1.PodRunning):
		return vmafxv1.ReasonTrainerPodRefused, text.OneLine(fmt.Sprintf("the API server refuses the Pod of Deployment %s: %s; the Deployment keeps trying", obs.deployment, obs.refused), attempt.MaxMessage)
	case p != nil && !trainerRunning(p):
		if n, exit := lastExit(p); n > 0 {
			return vmafxv1.ReasonTrainerRestarting, text.OneLine(fmt.Sprintf("%s; restarted %d times, its last exit: %s", podMessage(obs), n, exit), attempt.MaxMessage)
		}
	}
	return vmafxv1.ReasonTrainerStarting, podMessage(obs)
}

// trainerRunning says whether the trainer container of p runs (false before it first
// starts and while the kubelet waits to restart it).
func trainerRunning(p *corev1.Pod) bool {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == containerName {
			return cs.State.Running != nil
		}
	}
	return false
}

// lastExit is how often the trainer container of p restarted and, when it did, its last
// exit for people: the kubelet's reason, the exit code and the end of its log.
func lastExit(p *corev1.Pod) (restarts int32, exit string) {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name != containerName {
			continue
		}
		t := cs.LastTerminationState.Terminated
		if t == nil {
			return cs.RestartCount, "not known"
		}
		exit = fmt.Sprintf("%s, exit code %d", t.Reason, t.ExitCode)
		if m := strings.TrimSpace(t.Message); m != "" {
			exit += ": " + m
		}
		return cs.RestartCount, text.OneLine(exit, attempt.MaxMessage)
	}
	return 0, ""
}

// replicaFailure is the Deployment's word that the API server refuses its Pods (the
// ReplicaSet's FailedCreate, shown in the Deployment's ReplicaFailure condition).
func replicaFailure(dep *appsv1.Deployment) string {
	for _, c := range dep.Status.Conditions {
		if c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue {
			return c.Message
		}
	}
	return ""
}

// podMessage says why the trainer is not reporting yet, from its Pod.
func podMessage(obs observed) string {
	p := obs.pod
	if p == nil {
		return fmt.Sprintf("waiting for a Pod of Deployment %s", obs.deployment)
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			return text.OneLine(fmt.Sprintf("trainer Pod %s: %s: %s", p.Name, w.Reason, w.Message), attempt.MaxMessage)
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return fmt.Sprintf("trainer Pod %s: %s: %s", p.Name, c.Reason, c.Message)
		}
	}
	return fmt.Sprintf("trainer Pod %s is %s and does not answer at :%d%s yet", p.Name, p.Status.Phase, vmafxv1.TrainerPort, vmafxv1.TrainerStatusPath)
}

func condition(tr *vmafxv1.VmafxModelTraining, t string) *metav1.Condition {
	return meta.FindStatusCondition(tr.Status.Conditions, t)
}
