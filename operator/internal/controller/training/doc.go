// Package training reconciles VmafxModelTrainings. The online trainer itself is not part
// of this release: the reconciler validates a run's inputs and reports, in its phase and
// Ready condition, that training has not started, so nobody waits on a run that cannot
// progress. The trainer will plug in behind trainerAvailable.
package training
