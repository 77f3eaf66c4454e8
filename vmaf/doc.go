// Package vmaf computes Netflix VMAF scores in pure Go.
//
// The feature extractors reproduce libvmaf 3.2.0's default integer path
// (integer_vif, integer_adm and integer_motion, plain C code) bit for bit
// where libvmaf uses integer arithmetic, and follow its float and double
// rounding elsewhere, so per-frame features and scores match libvmaf's
// printed output.
//
// Per frame it reports libvmaf's metrics under libvmaf's names:
// integer_adm2, integer_aim, integer_adm3, integer_adm_scale0..3,
// VMAF_integer_feature_motion_sad_score, integer_vif_scale0..3,
// integer_motion2, integer_motion3 and vmaf; the VIF and ADM names carry the
// model's gain-limit suffix (e.g. "_egl_1" for vmaf_v0.6.1neg). Models are
// libvmaf's SVM JSON files; vmaf_v0.6.1 and vmaf_v0.6.1neg are built in,
// with "phone" variants that enable the score transform.
//
// A typical use opens two inputs, scores them and writes libvmaf-style JSON:
//
//	ref, _ := vmaf.OpenY4M(refFile)
//	dist, _ := vmaf.OpenY4M(distFile)
//	res, err := vmaf.Score(ctx, ref, dist, vmaf.Options{Model: "vmaf_v0.6.1"})
//	if err != nil { ... }
//	res.WriteJSON(os.Stdout)
//
// Options.Features adds metrics beside VMAF, computed in the same pass over
// the frames and reported under libvmaf's names: PSNR (psnr_y, psnr_cb,
// psnr_cr), SSIM (float_ssim), MS-SSIM (float_ms_ssim) and CAMBI (cambi),
// each reproducing libvmaf 3.2.0's extractor with its default options. They
// never change the VMAF scores.
//
// Inputs are streamed frame by frame: memory use is bounded by a few frames
// per worker whatever the length of the clips. Only the luma plane is kept,
// since every VMAF feature is computed on luma, unless PSNR asks for the
// chroma planes (Frame.Chroma). For an Offload that takes whole frames (a GPU
// backend), 8-bit luma stays the bytes read (Frame.Packed): the device takes
// bytes, and the CPU widens a frame only where it scores it.
//
// The package does no logging; all failures are returned as errors that
// wrap one of the sentinel errors (ErrTruncated, ErrBadHeader, ...), so
// callers can map them with errors.Is.
package vmaf
