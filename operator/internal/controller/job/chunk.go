package job

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/workerpod"
)

// A job with spec.parallelism above 1 is chunked: it runs in steps, each a worker Pod of
// its own with its own attempts. The probe counts the frame pairs; the frames are then
// split by vmafxv1.PlanChunks and every chunk is scored at once, each writing a part
// beside spec.output; once all are done, the merge joins the parts into the output and
// reports the pooled scores, which become the job's result. A step's failure retries
// that step alone, against spec.backoffLimit; a lost step's Pod is replaced at once.
//
// Each step's progress is kept in status.chunks (a letter, the attempts and the failures
// per step): as for the single Pod, a step's outcome is written there before its Pod's
// result finalizer is released or the next attempt created.

// chunked says whether job runs as chunks.
func chunked(job *vmafxv1.VmafxJob) bool { return job.Spec.Parallelism > 1 }

// StepPodName is the name of attempt n of a chunked job's step: <job>-probe-<n>,
// <job>-c<chunk>-<n> or <job>-merge-<n>.
func StepPodName(job *vmafxv1.VmafxJob, step string, n int32) string {
	if step != vmafxv1.ChunkProbe && step != vmafxv1.ChunkMerge {
		step = "c" + step
	}
	return podName(job, "-"+step+"-"+strconv.Itoa(int(n)))
}

// step is one step's progress, as status.chunks records it.
type step struct {
	name             string // the vmafx.dev/chunk label: probe, merge or the chunk's index
	state            vmafxv1.ChunkState
	attempts, failed int32
	// probe, chunk and merge are what the step's worker does beside the job's score
	// (stepArgs); all unset for none.
	probe bool
	chunk *vmafxv1.RequestChunk
	merge *vmafxv1.RequestMerge
}

// lost is the number of the step's attempts that were lost.
func (st *step) lost() int32 {
	n := st.attempts - st.failed
	if st.state != vmafxv1.ChunkLost && st.attempts > 0 {
		n-- // the current attempt, not lost (yet)
	}
	return max(n, 0)
}

// recorded says whether attempt n's outcome is in the step's record.
func (st *step) recorded(n int32) bool {
	return n < st.attempts || n == st.attempts && (st.state == vmafxv1.ChunkDone || st.state == vmafxv1.ChunkFailed || st.state == vmafxv1.ChunkLost)
}

// steps is a chunked job's steps, loaded from and stored to status.chunks.
type steps struct {
	frames       int32
	probe, merge step
	chunks       []step
	// alignment is what the probe's search found with spec.alignment.auto (alignment.go).
	alignment *vmafxv1.JobAlignment
}

func loadSteps(job *vmafxv1.VmafxJob) *steps {
	c := job.Status.Chunks
	if c == nil {
		c = &vmafxv1.JobChunks{}
	}
	fromStep := func(name string, cs *vmafxv1.ChunkStep) step {
		st := step{name: name, state: vmafxv1.ChunkPending}
		if cs != nil {
			st.attempts, st.failed = cs.Attempts, cs.Failed
			if cs.State != "" {
				st.state = vmafxv1.ChunkState(cs.State[0])
			}
		}
		return st
	}
	ss := &steps{frames: c.Frames, probe: fromStep(vmafxv1.ChunkProbe, c.Probe), merge: fromStep(vmafxv1.ChunkMerge, c.Merge), alignment: c.Alignment}
	ss.probe.probe = true
	ss.chunks = make([]step, c.Total)
	for i := range ss.chunks {
		st := step{name: strconv.Itoa(i), state: vmafxv1.ChunkPending}
		if i < len(c.States) {
			st.state = vmafxv1.ChunkState(c.States[i])
		}
		if i < len(c.Attempts) {
			st.attempts = c.Attempts[i]
		}
		if i < len(c.Failed) {
			st.failed = c.Failed[i]
		}
		ss.chunks[i] = st
	}
	ss.planArgs(job)
	return ss
}

// plan splits the frames into chunks, once the probe has counted them.
func (ss *steps) plan(job *vmafxv1.VmafxJob, frames int32) {
	ss.frames = frames
	ss.chunks = make([]step, len(vmafxv1.PlanChunks(int(frames), int(job.Spec.Parallelism))))
	for i := range ss.chunks {
		ss.chunks[i] = step{name: strconv.Itoa(i), state: vmafxv1.ChunkPending}
	}
	ss.planArgs(job)
}

// planArgs gives each chunk and the merge what their worker does beside the job's score.
func (ss *steps) planArgs(job *vmafxv1.VmafxJob) {
	output := ""
	if job.Spec.Output != nil {
		output = string(*job.Spec.Output)
	}
	for i, c := range vmafxv1.PlanChunks(int(ss.frames), int(job.Spec.Parallelism)) {
		if i < len(ss.chunks) {
			ss.chunks[i].chunk = &vmafxv1.RequestChunk{Start: c.Start, Count: c.Count, TotalFrames: int(ss.frames), Part: vmafxv1.ChunkPartURI(output, i)}
		}
	}
	ss.merge.merge = &vmafxv1.RequestMerge{Parts: len(ss.chunks)}
}

// stepArgs is the worker command line of a step of job (aligned as its chunks are).
func stepArgs(job *vmafxv1.VmafxJob, st *step) []string {
	req := workerRequest(job)
	req.Score.Probe, req.Score.Chunk, req.Score.Merge = st.probe, st.chunk, st.merge
	return workerpod.Args(req)
}

// all is every step, the probe first and the merge last.
func (ss *steps) all() []*step {
	out := []*step{&ss.probe}
	for i := range ss.chunks {
		out = append(out, &ss.chunks[i])
	}
	return append(out, &ss.merge)
}

// byLabel returns the step a Pod's vmafx.dev/chunk label names, or nil.
func (ss *steps) byLabel(label string) *step {
	switch label {
	case vmafxv1.ChunkProbe:
		return &ss.probe
	case vmafxv1.ChunkMerge:
		return &ss.merge
	}
	i, err := strconv.Atoi(label)
	if err != nil || i < 0 || i >= len(ss.chunks) {
		return nil
	}
	return &ss.chunks[i]
}

func (ss *steps) done() int32 {
	var n int32
	for i := range ss.chunks {
		if ss.chunks[i].state == vmafxv1.ChunkDone {
			n++
		}
	}
	return n
}

// store writes the steps to status.chunks and the job's attempt counters.
func (ss *steps) store(job *vmafxv1.VmafxJob) {
	toStep := func(st *step) *vmafxv1.ChunkStep {
		if st.attempts == 0 {
			return nil
		}
		return &vmafxv1.ChunkStep{State: string(st.state), Attempts: st.attempts, Failed: st.failed}
	}
	c := &vmafxv1.JobChunks{Frames: ss.frames, Total: int32(len(ss.chunks)), Done: ss.done(), Probe: toStep(&ss.probe), Merge: toStep(&ss.merge),
		Alignment: ss.alignment}
	if c.Total > 0 {
		var states strings.Builder
		c.Attempts, c.Failed = make([]int32, c.Total), make([]int32, c.Total)
		for i := range ss.chunks {
			states.WriteByte(byte(ss.chunks[i].state))
			c.Attempts[i], c.Failed[i] = ss.chunks[i].attempts, ss.chunks[i].failed
		}
		c.States = states.String()
		c.Progress = fmt.Sprintf("%d/%d", c.Done, c.Total)
	}
	job.Status.Chunks = c
	var attempts, failed, lost int32
	for _, st := range ss.all() {
		attempts, failed, lost = attempts+st.attempts, failed+st.failed, lost+st.lost()
	}
	job.Status.Attempts, job.Status.FailedAttempts, job.Status.LostAttempts = attempts, failed, lost
}

// recordedStepPods are the Pods of a chunked job whose outcome its status records.
func recordedStepPods(job *vmafxv1.VmafxJob, pods []*corev1.Pod) []*corev1.Pod {
	if isFinished(job) {
		return pods
	}
	ss := loadSteps(job)
	var out []*corev1.Pod
	for _, p := range pods {
		if st := ss.byLabel(p.Labels[vmafxv1.LabelChunk]); st != nil && st.recorded(attemptOf(p)) {
			out = append(out, p)
		}
	}
	return out
}

// chunkLimitRecheck is how soon a chunked job whose next step waits for the namespace's
// worker limit looks again: other jobs' Pods finishing do not wake it, its own do.
const chunkLimitRecheck = 10 * time.Second

// chunkRun is what one reconcile of a chunked job knows beside the scope.
type chunkRun struct {
	*scope
	ss *steps
	// requeue is the soonest a step asked to be looked at again; 0: none.
	requeue time.Duration
	backoff bool // a step asked for the queue's backoff
	// fresh: the cached job was found to be the API server's (checked once, before a retry).
	fresh *bool
	// failed: the job failed in this reconcile.
	failed bool
	// unplaced is a step's Pod that the scheduler has not placed, to explain the wait.
	unplaced *observation
}

func (c *chunkRun) after(d time.Duration) {
	if d > 0 && (c.requeue == 0 || d < c.requeue) {
		c.requeue = d
	}
}

func (c *chunkRun) fail(reason, msg string) {
	if c.failed {
		return
	}
	c.failed = true
	setFailed(c.job, reason, msg, c.now)
}

// reconcileChunked moves a chunked job forward: the probe, then every chunk, then the
// merge.
func (r *Reconciler) reconcileChunked(ctx context.Context, s *scope) (ctrl.Result, error) {
	if err := workerpod.CheckVolume(s.job.Spec.Volume, r.Volumes); err != nil {
		msg := oneLine(err.Error())
		setFailed(s.job, ReasonVolumeNotAllowed, msg, s.now)
		s.emit(true, ReasonVolumeNotAllowed, "Fail", msg, nil)
		return ctrl.Result{}, nil
	}
	c := &chunkRun{scope: s, ss: loadSteps(s.job)}
	var errs []error
	if c.ss.frames == 0 {
		o, err := r.runStep(ctx, c, &c.ss.probe)
		errs = append(errs, err)
		if o != nil {
			c.ss.alignment = probedAlignment(s.job, o.result)
			c.ss.plan(s.job, int32(o.result.Frames))
			s.emit(false, ReasonChunksPlanned, "Plan", fmt.Sprintf("%d frames in %d chunks", o.result.Frames, len(c.ss.chunks)), nil)
		}
	}
	if c.ss.frames > 0 {
		for i := range c.ss.chunks {
			if c.failed {
				break
			}
			_, err := r.runStep(ctx, c, &c.ss.chunks[i])
			errs = append(errs, err)
		}
		if !c.failed && c.ss.done() == int32(len(c.ss.chunks)) {
			o, err := r.runStep(ctx, c, &c.ss.merge)
			errs = append(errs, err)
			if o != nil {
				r.chunkedSucceeded(c, o)
			}
		}
	}
	c.ss.store(s.job)
	if c.failed {
		// Chunks still running score for nothing now.
		for _, p := range s.pods {
			if st := observe(p).state; st == podPending || st == podRunning {
				errs = append(errs, r.deletePod(ctx, p))
			}
		}
	} else if !isFinished(s.job) {
		setChunkProgress(c)
	}
	err := errors.Join(errs...)
	if c.backoff {
		return requeueWithBackoff, err
	}
	return ctrl.Result{RequeueAfter: c.requeue}, err
}

// runStep moves one step forward. It returns the observation of the step's Pod when the
// step succeeded in this reconcile.
func (r *Reconciler) runStep(ctx context.Context, c *chunkRun, st *step) (*observation, error) {
	label := st.name
	for _, p := range c.pods {
		if n := attemptOf(p); p.Labels[vmafxv1.LabelChunk] == label && n > st.attempts {
			// A Pod the status has not counted (its write failed): its outcome is to come.
			st.attempts, st.state = n, vmafxv1.ChunkPending
		}
	}
	if st.state == vmafxv1.ChunkDone {
		return nil, nil
	}
	if st.attempts == 0 {
		return nil, r.startStep(ctx, c, st, 1, "first")
	}
	name := StepPodName(c.job, label, st.attempts)
	pod, err := r.ownPod(ctx, c.scope, name)
	if err != nil {
		return nil, err
	}
	if st.state == vmafxv1.ChunkFailed || st.state == vmafxv1.ChunkLost {
		return nil, r.retryStep(ctx, c, st, pod)
	}
	if pod == nil {
		r.stepLost(c, st, fmt.Sprintf("worker Pod %s was deleted", name), nil)
		return nil, nil
	}
	o := observe(pod)
	if o.started != nil && c.job.Status.StartTime == nil {
		c.job.Status.StartTime = timePtr(*o.started)
	}
	switch o.state {
	case podPending:
		st.state = vmafxv1.ChunkPending
		if o.bound {
			left := o.since.Add(r.PodStartTimeout).Sub(c.now)
			if left > 0 {
				c.after(left + recheckMargin)
				return nil, nil
			}
			// As for a single Pod: a Pod that does not start in time is deleted and its
			// attempt fails with the kubelet's reason.
			reason := o.reason
			if reason == ReasonScheduled {
				reason = ReasonStartTimeout
			}
			o.state, o.reason, o.ended = podFailed, reason, c.now
			o.message = oneLine(fmt.Sprintf("worker Pod %s did not start within %s of being bound to node %s: %s", pod.Name, r.PodStartTimeout, o.node, o.message))
			if err := r.deletePod(ctx, pod); err != nil {
				return nil, err
			}
			r.stepFailed(c, st, pod, o)
			return nil, nil
		}
		if c.unplaced == nil {
			c.unplaced = &o
		}
		if d := r.pendingDeadline(c.job); d > 0 {
			left := o.since.Add(d).Sub(c.now)
			if left <= 0 {
				msg := oneLine(fmt.Sprintf("worker Pod %s was not placed on a node within the pending deadline (%s): %s", pod.Name, d, o.message))
				c.fail(ReasonPendingDeadline, msg)
				c.emit(true, ReasonPendingDeadline, "Fail", msg, pod)
				return nil, nil
			}
			c.after(left + recheckMargin)
		}
	case podRunning:
		st.state = vmafxv1.ChunkRunning
		c.job.Status.Node = o.node
	case podSucceeded:
		st.state = vmafxv1.ChunkDone
		return &o, nil
	case podTerminating:
		if left := o.since.Add(r.TerminatingTimeout).Sub(c.now); left > 0 {
			c.after(left + recheckMargin)
			return nil, nil
		}
		why := fmt.Sprintf("worker Pod %s stayed Terminating %s past its grace period: its node %s does not answer", pod.Name, r.TerminatingTimeout, pod.Spec.NodeName)
		c.forceDelete = append(c.forceDelete, pod)
		r.stepLost(c, st, why, pod)
	case podLost:
		r.stepLost(c, st, o.message, pod)
	default:
		r.stepFailed(c, st, pod, o)
	}
	return nil, nil
}

// stepName names a step for people.
func stepName(st *step) string {
	if st.name == vmafxv1.ChunkProbe || st.name == vmafxv1.ChunkMerge {
		return "the " + st.name
	}
	return "chunk " + st.name
}

// stepLost records that the step's current attempt was lost; it is retried at once.
func (r *Reconciler) stepLost(c *chunkRun, st *step, why string, pod *corev1.Pod) {
	st.state = vmafxv1.ChunkLost
	if st.lost() > maxLostAttempts {
		c.fail(ReasonTooManyLost, fmt.Sprintf("%d worker Pods of %s were lost (the last: %s); giving up", st.lost(), stepName(st), why))
		return
	}
	c.emit(true, ReasonPodLost, "Retry", fmt.Sprintf("%s: %s; starting a new attempt", stepName(st), why), pod)
	c.backoff = true
}

// stepFailed records that the step's current attempt failed, and fails the job when the
// failure is deterministic or the step's failures pass spec.backoffLimit.
func (r *Reconciler) stepFailed(c *chunkRun, st *step, pod *corev1.Pod, o observation) {
	st.failed++
	st.state = vmafxv1.ChunkFailed
	limit := backoffLimit(c.job)
	what := fmt.Sprintf("%s, attempt %d, failed (%s): %s", stepName(st), st.attempts, o.reason, o.message)
	switch {
	case permanentReasons[o.reason]:
		c.fail(o.reason, what+"; not retried, as the same input fails the same way")
		c.emit(true, ReasonNotRetried, "Fail", c.job.Status.Message, pod)
	case st.failed > limit:
		c.fail(o.reason, fmt.Sprintf("%s; backoffLimit %d reached", what, limit))
		c.emit(true, ReasonBackoffLimit, "Fail", c.job.Status.Message, pod)
	default:
		retryAt := r.retryAt(st.failed, o, c.now)
		c.emit(true, ReasonAttemptFailed, "Retry", fmt.Sprintf("%s; retrying in %s", what, max(retryAt.Sub(c.now), 0).Round(time.Second)), pod)
		c.after(max(retryAt.Sub(c.now), 0) + recheckMargin)
	}
}

// retryStep starts the attempt after a failed or lost one, once its Pod is gone or
// finished and, after a failure, the backoff has passed.
func (r *Reconciler) retryStep(ctx context.Context, c *chunkRun, st *step, pod *corev1.Pod) error {
	if pod != nil {
		o := observe(pod)
		switch o.state {
		case podPending, podRunning:
			// The step never has two live Pods: this one goes before the next comes.
			c.after(r.TerminatingTimeout)
			return r.deletePod(ctx, pod)
		case podTerminating:
			if left := o.since.Add(r.TerminatingTimeout).Sub(c.now); left > 0 {
				c.after(left + recheckMargin)
				return nil
			}
			c.forceDelete = append(c.forceDelete, pod)
			c.backoff = true
			return nil
		}
		if st.state == vmafxv1.ChunkFailed {
			if left := r.retryAt(st.failed, o, c.now).Sub(c.now); left > 0 {
				c.after(left + recheckMargin)
				return nil
			}
		}
	}
	fresh, err := r.jobIsFresh(ctx, c)
	if err != nil || !fresh {
		c.after(cacheLagRetry)
		return err
	}
	kind := "lost"
	if st.state == vmafxv1.ChunkFailed {
		kind = "retry"
	}
	return r.startStep(ctx, c, st, st.attempts+1, kind)
}

// jobIsFresh says whether the cached job is the API server's: a retry computed from a
// cache that lags could repeat an attempt that already ran.
func (r *Reconciler) jobIsFresh(ctx context.Context, c *chunkRun) (bool, error) {
	if c.fresh == nil {
		live := &vmafxv1.VmafxJob{}
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(c.job), live); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		fresh := live.ResourceVersion == c.job.ResourceVersion
		c.fresh = &fresh
	}
	return *c.fresh, nil
}

// startStep creates attempt n of a step. AlreadyExists means an earlier reconcile made it.
func (r *Reconciler) startStep(ctx context.Context, c *chunkRun, st *step, n int32, kind string) error {
	job := c.job
	if st != &c.ss.probe {
		job = c.ss.alignedJob(job)
	}
	pod := buildPod(job, n, r.Worker)
	pod.Name = StepPodName(c.job, st.name, n)
	pod.Spec.Hostname = hostname(pod.Name)
	pod.Labels[vmafxv1.LabelChunk] = st.name
	pod.Spec.Containers[0].Args = stepArgs(job, st)
	// A step's Pod counts against the namespace's worker limit like any worker Pod: at the
	// limit, the step stays unstarted and the job looks again when its own Pods change or
	// after chunkLimitRecheck.
	if r.limit != nil {
		ok, err := r.limit.admit(ctx, r.Client, c.job, pod.Name, c.now)
		if err != nil {
			return err
		}
		if !ok {
			klog.FromContext(ctx).V(4).Info("Step waits for a place under the namespace's worker limit", "pod", pod.Name, "limit", r.limit.max)
			c.after(chunkLimitRecheck)
			return nil
		}
	}
	err := r.Client.Create(ctx, pod)
	switch {
	case apierrors.IsAlreadyExists(err):
	case err != nil:
		r.limit.forget(pod.Namespace, pod.Name)
		return r.stepRefused(c, pod, err)
	default:
		r.Metrics.Attempts.WithLabelValues(kind).Inc()
		c.emit(false, ReasonPodCreated, "Create", fmt.Sprintf("created worker Pod %s (%s, attempt %d)", pod.Name, stepName(st), n), pod)
	}
	clearRefused(c.job, pod.Name)
	st.attempts, st.state = n, vmafxv1.ChunkPending
	return nil
}

// stepRefused handles the API server's refusal of a step's Pod as refused does for a
// single Pod: a refusal that stands fails the job, one that can pass (a used-up quota)
// is retried, and shown in PodRefused, until the pending deadline.
func (r *Reconciler) stepRefused(c *chunkRun, pod *corev1.Pod, err error) error {
	kind, reason := classifyRefusal(err, c.now.Sub(c.job.CreationTimestamp.Time))
	switch kind {
	case refusalNamespaceGone:
		return nil
	case refusalError:
		setCondition(c.job, vmafxv1.JobPodRefused, true, reason, oneLine(fmt.Sprintf("creating worker Pod %s: %v", pod.Name, err)))
		return fmt.Errorf("creating worker Pod %s: %w", pod.Name, err)
	}
	msg := oneLine(fmt.Sprintf("the API server refused worker Pod %s: %s", pod.Name, apiMessage(err)))
	setCondition(c.job, vmafxv1.JobPodRefused, true, reason, msg)
	if kind == refusalPermanent {
		c.fail(ReasonPodRefused, msg+"; it would be refused again: fix the cause and create the job anew")
		c.emit(true, ReasonFailedCreate, "Create", msg, nil)
		return nil
	}
	if d := r.pendingDeadline(c.job); d > 0 && c.now.Sub(c.job.CreationTimestamp.Time) >= d {
		c.fail(ReasonPendingDeadline, msg+fmt.Sprintf("; still refused after the pending deadline (%s)", d))
		return nil
	}
	c.after(r.RetryBackoff)
	return nil
}

// chunkedSucceeded records the merge's result as the job's. The speed is the whole job's:
// the frames over the time from the first worker's start to the merge's end.
func (r *Reconciler) chunkedSucceeded(c *chunkRun, o *observation) {
	job := c.job
	job.Status.PodName = StepPodName(job, vmafxv1.ChunkMerge, c.ss.merge.attempts)
	job.Status.Node = o.node
	setSucceeded(job, *o, c.now)
	setChunkedAlignment(job, c.ss.alignment)
	if start := job.Status.StartTime; start != nil {
		if d := job.Status.CompletionTime.Sub(start.Time).Seconds(); d > 0 {
			job.Status.Result.FPS = fmt.Sprintf("%.2f", float64(o.result.Frames)/d)
		}
	}
	job.Status.Message = fmt.Sprintf("VMAF %s over %d frames in %d chunks, merged on node %s", job.Status.Score, o.result.Frames, len(c.ss.chunks), o.node)
	setCondition(job, vmafxv1.JobComplete, true, ReasonSucceeded, job.Status.Message)
	c.emit(false, ReasonSucceeded, "Score", job.Status.Message, nil)
	if o.result.OutputError != "" {
		c.emit(true, ReasonOutputFailed, "WriteOutput", "the score is kept, but the per-frame output was not written: "+oneLine(o.result.OutputError), nil)
	}
}

// setChunkProgress sets the phase, message and conditions of a chunked job under way.
func setChunkProgress(c *chunkRun) {
	job, ss := c.job, c.ss
	running := 0
	for _, st := range ss.all() {
		if st.state == vmafxv1.ChunkRunning {
			running++
		}
	}
	var msg string
	switch {
	case ss.frames == 0:
		msg = "counting the frames to split them into chunks"
	case ss.done() < int32(len(ss.chunks)):
		msg = fmt.Sprintf("%d of %d chunks scored, %d running", ss.done(), len(ss.chunks), running)
	default:
		msg = fmt.Sprintf("merging the %d chunks into %s", len(ss.chunks), string(*job.Spec.Output))
	}
	job.Status.Message = msg
	if running > 0 {
		job.Status.Phase = vmafxv1.JobRunning
		setCondition(job, vmafxv1.JobScheduled, true, ReasonScheduled, "worker Pods are placed")
		setCondition(job, vmafxv1.JobRunningCondition, true, ReasonStarted, msg)
		return
	}
	job.Status.Phase = vmafxv1.JobPending
	if u := c.unplaced; u != nil {
		setCondition(job, vmafxv1.JobScheduled, false, u.reason, u.message)
		job.Status.Message = msg + "; " + u.message
	}
	setCondition(job, vmafxv1.JobRunningCondition, false, ReasonNotStarted, msg)
}
