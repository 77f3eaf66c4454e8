package job

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

// The setters below are the only code that writes a job's phase, message and
// conditions. Each is pure: it derives them from what was observed.

func setCondition(job *vmafxv1.VmafxJob, typ string, status bool, reason, message string) {
	s := metav1.ConditionFalse
	if status {
		s = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&job.Status.Conditions, metav1.Condition{
		Type: typ, Status: s, Reason: reason, Message: message, ObservedGeneration: job.Generation,
	})
}

// setPending: the attempt's Pod waits to be created, placed or started. The Scheduled
// condition carries the scheduler's reason, so an unschedulable job explains itself; once
// the Pod is bound, the Running condition carries the kubelet's reason for not starting
// it yet (ImagePullBackOff, CreateContainerConfigError, ...).
func setPending(job *vmafxv1.VmafxJob, o observation) {
	job.Status.Phase = vmafxv1.JobPending
	job.Status.Message = o.Message
	if o.Bound {
		setCondition(job, vmafxv1.JobScheduled, true, ReasonScheduled, fmt.Sprintf("worker Pod %s is bound to node %s", job.Status.PodName, o.Node))
		if o.Reason != ReasonScheduled {
			setCondition(job, vmafxv1.JobRunningCondition, false, o.Reason, o.Message)
			return
		}
	} else {
		setCondition(job, vmafxv1.JobScheduled, false, o.Reason, o.Message)
	}
	setCondition(job, vmafxv1.JobRunningCondition, false, ReasonNotStarted, "the worker has not started")
}

// setLost: attempt n's Pod was lost; the next attempt starts at once.
func setLost(job *vmafxv1.VmafxJob, n int32, why string) {
	job.Status.Phase = vmafxv1.JobPending
	job.Status.Message = fmt.Sprintf("attempt %d lost: %s; starting a new attempt", n, why)
	setCondition(job, vmafxv1.JobRunningCondition, false, ReasonPodLost, job.Status.Message)
}

// clearRefused turns PodRefused off once a Pod was created, if it was ever on.
func clearRefused(job *vmafxv1.VmafxJob, pod string) {
	if meta.FindStatusCondition(job.Status.Conditions, vmafxv1.JobPodRefused) != nil {
		setCondition(job, vmafxv1.JobPodRefused, false, ReasonPodCreated, fmt.Sprintf("worker Pod %s was created", pod))
	}
}

func setRunning(job *vmafxv1.VmafxJob, o observation) {
	job.Status.Phase = vmafxv1.JobRunning
	job.Status.Message = o.Message
	setCondition(job, vmafxv1.JobScheduled, true, ReasonScheduled, fmt.Sprintf("worker Pod %s is bound to node %s", job.Status.PodName, o.Node))
	setCondition(job, vmafxv1.JobRunningCondition, true, ReasonStarted, o.Message)
}

func setSucceeded(job *vmafxv1.VmafxJob, o observation, now time.Time) {
	setResult(job, o.Result)
	succeed(job, o, now, scoreMessage(job, o.Result, o.Node))
}

// setResult records the worker's score r as the job's result (status.score and
// status.result), with its worst frames, output and alignment conditions.
func setResult(job *vmafxv1.VmafxJob, r *vmafxv1.WorkerResult) {
	job.Status.Score = decimal(r.Score)
	model := r.Model
	if r.ModelSHA256 != "" {
		model = fmt.Sprintf("%s@sha256:%s", r.Model, r.ModelSHA256)
	}
	job.Status.Result = &vmafxv1.JobResult{
		Mean: decimal(r.Score), HarmonicMean: decimal(r.HarmonicMean), Min: decimal(r.Min), Max: decimal(r.Max),
		Frames: int32(r.Frames), FPS: fmt.Sprintf("%.2f", r.FPS), Backend: r.Backend, Model: model,
		DistortedScaledFrom: r.DistortedScaledFrom, Device: deviceSummary(r.Device),
	}
	if i := r.Interval; i != nil {
		job.Status.Result.ConfidenceInterval = &vmafxv1.ScoreInterval{
			Low: decimal(i.Low), High: decimal(i.High), Bagging: decimal(i.Bagging), StdDev: decimal(i.StdDev),
		}
	}
	if len(r.Features) > 0 {
		job.Status.Result.Features = make(map[string]string, len(r.Features))
		for name, v := range r.Features {
			job.Status.Result.Features[name] = decimal(v)
		}
	}
	job.Status.Result.JobWorst = jobWorst(r)
	setOutputWritten(job, r)
	setAligned(job, r)
}

// scoreMessage is the message of a job whose result (setResult) is r, scored on node.
func scoreMessage(job *vmafxv1.VmafxJob, r *vmafxv1.WorkerResult, node string) string {
	backend := r.Backend
	if r.RequestedBackend != "" && r.RequestedBackend != r.Backend {
		backend = fmt.Sprintf("%s (the slot offered %s)", r.Backend, r.RequestedBackend)
	}
	score := job.Status.Score
	if ci := job.Status.Result.ConfidenceInterval; ci != nil {
		score = fmt.Sprintf("%s (95%% confidence interval %s to %s)", score, ci.Low, ci.High)
	}
	return fmt.Sprintf("VMAF %s over %d frames on node %s, backend %s", score, r.Frames, node, backend)
}

// succeed ends the job as Succeeded, with message, once its attempt o ended.
func succeed(job *vmafxv1.VmafxJob, o observation, now time.Time, message string) {
	job.Status.Phase = vmafxv1.JobSucceeded
	job.Status.Message = message
	ended := o.Ended
	if ended.IsZero() {
		ended = now
	}
	job.Status.CompletionTime = timePtr(ended)
	setCondition(job, vmafxv1.JobScheduled, true, ReasonScheduled, fmt.Sprintf("worker Pod %s was bound to node %s", job.Status.PodName, o.Node))
	setCondition(job, vmafxv1.JobRunningCondition, false, ReasonFinished, "the worker finished")
	setCondition(job, vmafxv1.JobComplete, true, ReasonSucceeded, job.Status.Message)
}

// setOutputWritten records whether spec.output holds the per-frame scores. A failed output
// never fails the job: the score was computed and is kept.
func setOutputWritten(job *vmafxv1.VmafxJob, r *vmafxv1.WorkerResult) {
	if job.Spec.Output == nil {
		return
	}
	if r.OutputError != "" {
		setCondition(job, vmafxv1.JobOutputWritten, false, ReasonOutputFailed, oneLine(r.OutputError))
		return
	}
	setCondition(job, vmafxv1.JobOutputWritten, true, ReasonOutputWritten, "per-frame scores written to "+string(*job.Spec.Output))
}

func setRetrying(job *vmafxv1.VmafxJob, o observation, n int32, at time.Time) {
	job.Status.Phase = vmafxv1.JobPending
	job.Status.Message = fmt.Sprintf("attempt %d failed (%s): %s; next attempt at %s", n, o.Reason, o.Message, at.UTC().Format(time.RFC3339))
	setCondition(job, vmafxv1.JobRunningCondition, false, ReasonAttemptFailed, job.Status.Message)
}

func setWaitingForDeletion(job *vmafxv1.VmafxJob, o observation) {
	job.Status.Message = o.Message + "; the next attempt starts once it is gone"
	setCondition(job, vmafxv1.JobRunningCondition, false, ReasonPodTerminating, job.Status.Message)
}

func setFailed(job *vmafxv1.VmafxJob, reason, message string, now time.Time) {
	job.Status.Phase = vmafxv1.JobFailed
	job.Status.Message = message
	job.Status.CompletionTime = timePtr(now)
	setCondition(job, vmafxv1.JobRunningCondition, false, ReasonFinished, "the job has failed")
	setCondition(job, vmafxv1.JobFailedCondition, true, reason, message)
}

func isScheduled(job *vmafxv1.VmafxJob) bool {
	return meta.IsStatusConditionTrue(job.Status.Conditions, vmafxv1.JobScheduled)
}

// decimal prints a score as libvmaf does: six decimals.
func decimal(v float64) string { return fmt.Sprintf("%.6f", v) }

func timePtr(t time.Time) *metav1.Time {
	mt := metav1.NewTime(t)
	return &mt
}

func metav1IsControlledBy(obj metav1.Object, owner metav1.Object) bool {
	return metav1.IsControlledBy(obj, owner)
}

// deviceSummary is the one line of status.result.device: name, API and driver, the
// features that still ran on the host, and the frames the CPU scored alone, if any.
func deviceSummary(d *vmafxv1.WorkerDevice) string {
	if d == nil || d.Name == "" {
		return ""
	}
	parts := []string{d.Name}
	for _, p := range []string{d.API, d.Driver} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	out := strings.Join(parts, ", ")
	if len(d.HostFeatures) > 0 {
		out += "; host: " + strings.Join(d.HostFeatures, ", ")
	}
	if d.CPUFrames > 0 {
		out += "; cpu frames: " + strconv.Itoa(d.CPUFrames)
	}
	return out
}
