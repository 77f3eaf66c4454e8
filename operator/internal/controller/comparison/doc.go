// Package comparison reconciles VmafxComparisons: it creates one VmafxJob per distorted
// video (named <comparison>-<name>, owned by the comparison) and gathers their results
// into the comparison's status table. Scheduling, retries and results are the VmafxJob
// controller's; this controller only creates and reads jobs.
package comparison
