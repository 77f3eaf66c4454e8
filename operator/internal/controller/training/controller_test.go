package training

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"

	vmafxv1 "github.com/vmafx/vmafx/apis/vmafx/v1"
)

func TestSetStatus(t *testing.T) {
	cases := []struct {
		base   string
		phase  vmafxv1.TrainingPhase
		reason string
	}{
		{"vmaf_v0.6.1", vmafxv1.TrainingInitializing, ReasonTrainerNotAvailable},
		{"vmaf_v0.6.1neg", vmafxv1.TrainingInitializing, ReasonTrainerNotAvailable},
		{"vmaf_v9", vmafxv1.TrainingFailed, ReasonUnknownBaseModel},
	}
	for _, tc := range cases {
		t.Run(tc.base, func(t *testing.T) {
			tr := &vmafxv1.VmafxModelTraining{Spec: vmafxv1.VmafxModelTrainingSpec{BaseModel: tc.base}}
			tr.Generation = 3
			setStatus(tr)
			c := meta.FindStatusCondition(tr.Status.Conditions, vmafxv1.TrainingReady)
			if tr.Status.Phase != tc.phase || c == nil || c.Reason != tc.reason || c.Status != "False" || tr.Status.ObservedGeneration != 3 {
				t.Errorf("got phase %s, condition %+v, observedGeneration %d; want %s / %s", tr.Status.Phase, c, tr.Status.ObservedGeneration, tc.phase, tc.reason)
			}
		})
	}
}
