package training

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// setStatus derives the run's status from what was observed: the trainer's own report
// when it answers, else the trainer Pod's state.
func setStatus(tr *vmafxv1.VmafxModelTraining, obs observed) {
	s := &tr.Status
	s.Trainer = obs.deployment
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
		// not running (yet, or again) is starting.
		if s.Phase == "" || s.Phase == vmafxv1.TrainingStopped || obs.pod == nil || obs.pod.Status.Phase != corev1.PodRunning {
			s.Phase = vmafxv1.TrainingInitializing
		}
		ready.Reason, ready.Message = vmafxv1.ReasonTrainerStarting, podMessage(obs)
	}
	if ready.Message == "" {
		ready.Message = ready.Reason
	}
	meta.SetStatusCondition(&s.Conditions, ready)
	s.ObservedGeneration = tr.Generation
}

// podMessage says why the trainer is not reporting yet, from its Pod.
func podMessage(obs observed) string {
	p := obs.pod
	if p == nil {
		return fmt.Sprintf("waiting for a Pod of Deployment %s", obs.deployment)
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			return fmt.Sprintf("trainer Pod %s: %s: %s", p.Name, w.Reason, w.Message)
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
