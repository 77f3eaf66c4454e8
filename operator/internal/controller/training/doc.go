// Package training reconciles VmafxModelTrainings: one trainer Deployment per run (the
// trainer image, vmafx-trainer), whose /status the reconciler reads
// every FollowInterval and reflects in the run's status, with a CheckpointWritten event
// per model version the trainer pushes.
package training
