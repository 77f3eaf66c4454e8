// Package train is the learning core of VMAFX's online training: it adapts a libvmaf SVR
// model to labelled samples by online SGD on the SVR's coefficients and offset, keeping
// the base model's feature normalisation and support vectors, and publishes the
// exponential moving average of the parameters as a libvmaf JSON model.
//
// A sample is one scored job: its per-frame features (from the per-frame JSON log the
// worker writes) and a subjective score on VMAF's 0-100 scale. The loss is the squared
// error between the job's pooled prediction (the mean of the per-frame scores) and the
// label. Each step is normalised SGD (NLMS): it moves the sample's own prediction by
// LearningRate times its error, clipped to ±UpdateClip, so the learning rate is
// dimensionless and the same for every model. Every k-th sample is held out to measure
// the published model against the base model. The package is pure Go and never logs.
package train
