package ladder

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
	"github.com/vmafx/vmafx/operator/internal/attempt"
)

// report runs the report Pod through the attempt engine, as the encodes run: a failed
// report is retried after the backoff within backoffLimit, a lost one at once, a refused
// create waits within the pending deadline. Once it wrote the report or the engine gave
// up, the ladder Succeeded either way: its table and hull are in the status.
func (r *Reconciler) report(ctx context.Context, s *scope) error {
	l := s.ladder
	st := &l.Status
	stp := step{attempts: &st.ReportAttempts, failures: &st.ReportFailures, lost: &st.ReportLost,
		pod: func(n int32) string { return ReportPodName(l, n) }, what: "the report"}
	d, related, err := decideStep(ctx, r, s, stp, parseReport)
	if err != nil {
		return err
	}
	switch d.Action {
	case attempt.Start:
		args, err := reportArgs(l)
		if err != nil {
			return err
		}
		c, err := r.start(ctx, s, stp, func(n int32) *corev1.Pod {
			return buildPod(l, ReportPodName(l, n), stepReport, "", n, args, r.Worker)
		})
		switch {
		case c.failed != "":
			r.reportDone(l, nil, false, c.reason, c.failed)
		case c.waiting != "":
			setCondition(l, vmafxv1.LadderReportWritten, false, ReasonReportPending, c.waiting)
		}
		return err
	case attempt.Succeed:
		st.Report = string(vmafxv1.JoinOutput(l.Spec.Output, "ladder"))
		r.reportDone(l, related, true, vmafxv1.ReasonReportWritten, "ladder.json, ladder.csv and ladder.svg are written under "+string(l.Spec.Output))
	case attempt.Fail:
		r.reportDone(l, related, false, ReasonReportFailed, d.Message)
	case attempt.RecordFailure:
		msg := oneLine(fmt.Sprintf("%s; retrying at %s", d.Message, d.RetryAt.UTC().Format(time.RFC3339)))
		setCondition(l, vmafxv1.LadderReportWritten, false, attempt.ReasonAttemptFailed, msg)
		r.Recorder.Eventf(l, related, corev1.EventTypeWarning, attempt.ReasonAttemptFailed, "Report", "%s", msg)
	case attempt.RecordLoss:
		msg := oneLine(d.Message + "; starting a new report Pod")
		setCondition(l, vmafxv1.LadderReportWritten, false, attempt.ReasonPodLost, msg)
		r.Recorder.Eventf(l, related, corev1.EventTypeWarning, attempt.ReasonPodLost, "Report", "%s", msg)
	}
	return nil
}

// ReasonReportPending: the report Pod waits to be created (the namespace's limit, or a
// refusal that may pass).
const ReasonReportPending = "ReportPending"

// reportDone ends the report, written or not, and with it the ladder, which Succeeded:
// its table and hull are in the status either way.
func (r *Reconciler) reportDone(l *vmafxv1.VmafxLadder, related runtime.Object, written bool, reason, msg string) {
	if !written {
		msg = oneLine(msg + "; the table and hull are in the status")
		r.Recorder.Eventf(l, related, corev1.EventTypeWarning, ReasonReportFailed, "Report", "%s", msg)
	}
	setCondition(l, vmafxv1.LadderReportWritten, written, reason, msg)
	l.Status.Phase = vmafxv1.JobSucceeded
	r.Recorder.Eventf(l, nil, corev1.EventTypeNormal, ReasonHullComputed, "Report", "%d rungs scored; chosen: %s", l.Status.Scored, strings.Join(l.Status.Hull, ", "))
}

// parseReport is what a success means for the report Pod: a valid report result.
func parseReport(b []byte) (*vmafxv1.ReportResult, string, string, error) {
	wr, err := vmafxv1.ParseReportResult(b)
	if err != nil {
		return nil, "", "", err
	}
	if wr.Error != nil {
		return wr, wr.Error.Reason, wr.Error.Message, nil
	}
	return wr, "", "", nil
}
