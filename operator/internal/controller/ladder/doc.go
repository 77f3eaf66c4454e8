// Package ladder reconciles VmafxLadders, the per-title encoding ladder: for every rung of
// the grid (resolution x encoder x quality value) it runs one encode Pod ("vmafx-worker
// encode", CPU work placed by the default scheduler, no scoring slot), then one VmafxJob
// that scores the encode against the reference scaled back to the reference's size, and
// once every rung has an outcome it marks the upper convex hull of bitrate against VMAF
// per encoder: the ladder's chosen rungs. A last report Pod writes ladder.json,
// ladder.csv and the plot ladder.svg beside the encodes, so the operator itself never
// needs the object store's credentials.
//
// Scoring, retries and placement of the scores are the VmafxJob controller's. Encode
// Pods are named <ladder>-enc-<rung>-<attempt>, report Pods <ladder>-report-<attempt>,
// so AlreadyExists makes their creation idempotent.
package ladder
