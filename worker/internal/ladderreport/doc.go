// Package ladderreport renders a VmafxLadder's table: as JSON, as CSV, and as an SVG plot
// of VMAF against bitrate with one curve per encoder and resolution and the convex hull
// (the chosen rungs) drawn over them. The output is deterministic: the same table gives
// the same bytes.
package ladderreport
