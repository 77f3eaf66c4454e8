package job

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/attempt"
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
			c.ss.alignment = probedAlignment(s.job, o.Result)
			c.ss.plan(s.job, int32(o.Result.Frames))
			s.emit(false, ReasonChunksPlanned, "Plan", fmt.Sprintf("%d frames in %d chunks", o.Result.Frames, len(c.ss.chunks)), nil)
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
			if st := observe(p).State; st == attempt.Pending || st == attempt.Running {
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

// runStep moves one step forward through the attempt engine. It returns the observation
// of the step's Pod when the step succeeded in this reconcile.
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
	var pod *corev1.Pod
	name := StepPodName(c.job, label, st.attempts)
	if st.attempts > 0 {
		var err error
		if pod, err = r.ownPod(ctx, c.scope, name); err != nil {
			return nil, err
		}
	}
	recorded := st.state == vmafxv1.ChunkFailed || st.state == vmafxv1.ChunkLost
	rec := attempt.Record{N: st.attempts, Failed: st.failed, Lost: st.lost(), Recorded: recorded, LastFailed: st.state == vmafxv1.ChunkFailed}
	d := attempt.Decide(r.policy(c.job), rec, attempt.Attempt{Pod: name, Step: stepName(st)}, pod, parseResult, c.now)
	c.emitAll(d.Events, pod)
	if d.Delete {
		if err := r.deletePod(ctx, pod); err != nil {
			return nil, err
		}
	}
	if d.ForceDelete {
		c.forceDelete = append(c.forceDelete, pod)
	}
	if pod != nil && !recorded && d.Obs.Started != nil && c.job.Status.StartTime == nil {
		c.job.Status.StartTime = timePtr(*d.Obs.Started)
	}
	switch d.Outcome {
	case attempt.RecordFailure:
		st.failed++
		st.state = vmafxv1.ChunkFailed
	case attempt.RecordLoss:
		st.state = vmafxv1.ChunkLost
	}
	switch d.Action {
	case attempt.Start:
		return nil, r.nextStep(ctx, c, st, rec)
	case attempt.Succeed:
		st.state = vmafxv1.ChunkDone
		return &d.Obs, nil
	case attempt.Fail:
		c.fail(d.Reason, d.Message)
		return nil, nil
	case attempt.Wait:
		switch {
		case recorded:
		case d.Obs.State == attempt.Running:
			st.state = vmafxv1.ChunkRunning
			c.job.Status.Node = d.Obs.Node
		case d.Obs.State == attempt.Pending:
			st.state = vmafxv1.ChunkPending
			if !d.Obs.Bound && c.unplaced == nil {
				c.unplaced = &d.Obs
			}
		}
	}
	if d.Requeue {
		c.backoff = true
	}
	c.after(d.After)
	return nil, nil
}

// stepName names a step for people.
func stepName(st *step) string {
	if st.name == vmafxv1.ChunkProbe || st.name == vmafxv1.ChunkMerge {
		return "the " + st.name
	}
	return "chunk " + st.name
}

// nextStep starts the step's attempt after rec.N (the first when there is none).
func (r *Reconciler) nextStep(ctx context.Context, c *chunkRun, st *step, rec attempt.Record) error {
	if rec.N == 0 {
		return r.startStep(ctx, c, st, 1, "first")
	}
	fresh, err := r.jobIsFresh(ctx, c)
	if err != nil || !fresh {
		c.after(cacheLagRetry)
		return err
	}
	kind := "lost"
	if rec.LastFailed {
		kind = "retry"
	}
	return r.startStep(ctx, c, st, rec.N+1, kind)
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
		ok, err := r.limit.Admit(ctx, r.Client, c.job, pod.Name, c.now)
		if err != nil {
			return err
		}
		if !ok {
			klog.FromContext(ctx).V(4).Info("Step waits for a place under the namespace's worker limit", "pod", pod.Name, "limit", r.limit.Max())
			c.after(chunkLimitRecheck)
			return nil
		}
	}
	created, err := attempt.Create(ctx, r.Client, pod)
	if err != nil {
		r.limit.Forget(pod.Namespace, pod.Name)
		// As for a single Pod: a refusal that stands fails the job, one that can pass (a
		// used-up quota) is retried, and shown in PodRefused, until the pending deadline.
		rf := r.refused(c.scope, pod.Name, err)
		switch {
		case rf.Err != nil:
			return rf.Err
		case rf.Fail:
			c.fail(rf.FailReason, rf.Message)
		default:
			c.after(rf.After)
		}
		return nil
	}
	r.created(ctx, c.scope, pod, created, kind, fmt.Sprintf("%s, attempt %d", stepName(st), n))
	st.attempts, st.state = n, vmafxv1.ChunkPending
	return nil
}

// chunkedSucceeded records the merge's result as the job's. The speed is the whole job's:
// the frames over the time from the first worker's start to the merge's end.
func (r *Reconciler) chunkedSucceeded(c *chunkRun, o *observation) {
	job := c.job
	job.Status.PodName = StepPodName(job, vmafxv1.ChunkMerge, c.ss.merge.attempts)
	job.Status.Node = o.Node
	setSucceeded(job, *o, c.now)
	setChunkedAlignment(job, c.ss.alignment)
	if start := job.Status.StartTime; start != nil {
		if d := job.Status.CompletionTime.Sub(start.Time).Seconds(); d > 0 {
			job.Status.Result.FPS = fmt.Sprintf("%.2f", float64(o.Result.Frames)/d)
		}
	}
	job.Status.Message = fmt.Sprintf("VMAF %s over %d frames in %d chunks, merged on node %s", job.Status.Score, o.Result.Frames, len(c.ss.chunks), o.Node)
	setCondition(job, vmafxv1.JobComplete, true, ReasonSucceeded, job.Status.Message)
	c.emit(false, ReasonSucceeded, "Score", job.Status.Message, nil)
	if o.Result.OutputError != "" {
		c.emit(true, ReasonOutputFailed, "WriteOutput", "the score is kept, but the per-frame output was not written: "+oneLine(o.Result.OutputError), nil)
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
		setCondition(job, vmafxv1.JobScheduled, false, u.Reason, u.Message)
		job.Status.Message = msg + "; " + u.Message
	}
	setCondition(job, vmafxv1.JobRunningCondition, false, ReasonNotStarted, msg)
}
