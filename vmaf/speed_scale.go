package vmaf

import "math"

// speed_prescale's rescaling (vif_tools.c, vif_scale_frame_s and its four
// methods), one output row at a time: SpEED filters only the rows around
// every 16th, so only those are computed. Each sample is computed exactly
// as libvmaf computes it: coordinates in double rounded to float, weights
// and sums in float.

// These kernels call a row function per method with the source plane src
// (w x h, stride w) and write row y of the dw x dh output into dst.

// The generic kernels use pi as a variable so that its products round as
// C's M_PI products do (a Go constant expression would be exact).
var speedPi = math.Pi

func speedScaleRow(method string, src []float32, w, h int, dst []float32, dw, dh, y int) {
	rx, ry := float32(w)/float32(dw), float32(h)/float32(dh)
	dst = dst[:dw]
	if method == "nearest" {
		sy := int(float32(y) * ry)
		row := src[sy*w : sy*w+w]
		for x := range dst {
			dst[x] = row[int(float32(x)*rx)]
		}
		return
	}
	yy := speedCoord(y, ry)
	for x := range dst {
		xx := speedCoord(x, rx)
		switch method {
		case "bilinear":
			dst[x] = speedBilinear(src, w, h, xx, yy)
		case "bicubic":
			dst[x] = speedBicubic(src, w, h, xx, yy)
		default: // lanczos4
			dst[x] = speedLanczos4(src, w, h, xx, yy)
		}
	}
}

// speedCoord is the source coordinate of output sample i: (i + 0.5) *
// ratio - 0.5 in double, rounded to float.
func speedCoord(i int, ratio float32) float32 {
	return float32(float64((float64(i)+0.5)*float64(ratio)) - 0.5)
}

// speedMirrorF is vif_tools.c's mirror on floats, with left = 0.
func speedMirrorF(i, right float32) float32 {
	switch {
	case i < 0:
		return -i
	case i > right:
		return 2*right - i
	}
	return i
}

// speedBilinear is bilinear_interpolation.
func speedBilinear(src []float32, w, h int, x, y float32) float32 {
	rw, rh := float32(w-1), float32(h-1)
	x1 := int(speedMirrorF(float32(math.Floor(float64(x))), rw))
	x2 := int(speedMirrorF(float32(math.Ceil(float64(x))), rw))
	y1 := int(speedMirrorF(float32(math.Floor(float64(y))), rh))
	y2 := int(speedMirrorF(float32(math.Ceil(float64(y))), rh))
	dx, dy := x-float32(x1), y-float32(y1)
	t1 := float32(float32((1-dy)*(1-dx)) * src[y1*w+x1])
	t2 := float32(float32((1-dy)*dx) * src[y1*w+x2])
	t3 := float32(float32(dy*(1-dx)) * src[y2*w+x1])
	t4 := float32(float32(dy*dx) * src[y2*w+x2])
	return t1 + t2 + t3 + t4
}

// speedCubic is bicubic_kernel, a = -0.75.
func speedCubic(t float32) float32 {
	const a = float32(-0.75)
	if t < 0 {
		t = -t
	}
	if t < 1 {
		return float32(float32((float32((a+2)*t)-(a+3))*t)*t) + 1
	}
	if t < 2 {
		return float32(float32(float32(float32((t-5)*t)+8)*t)-4) * a
	}
	return 0
}

// speedBicubic is bicubic_interpolation: 4x4 taps, mirrored at the edges.
func speedBicubic(src []float32, w, h int, x, y float32) float32 {
	x0, y0 := int(math.Floor(float64(x))), int(math.Floor(float64(y)))
	dx, dy := x-float32(x0), y-float32(y0)
	var wx, wy [4]float32
	for i := -1; i <= 2; i++ {
		wx[i+1] = speedCubic(float32(i) - dx)
		wy[i+1] = speedCubic(float32(i) - dy)
	}
	rw, rh := float32(w-1), float32(h-1)
	var v float32
	for j := -1; j <= 2; j++ {
		yi := int(speedMirrorF(float32(y0+j), rh))
		for i := -1; i <= 2; i++ {
			xi := int(speedMirrorF(float32(x0+i), rw))
			weight := float32(wx[i+1] * wy[j+1])
			v += float32(src[yi*w+xi] * weight)
		}
	}
	return v
}

// speedLanczosKernel is lanczos4_kernel, in double.
func speedLanczosKernel(x, a float32) float32 {
	if x == 0 {
		return 1
	}
	if x > -a && x < a {
		xd, ad := float64(x), float64(a)
		return float32(ad * math.Sin(speedPi*xd) * math.Sin(speedPi*xd/ad) / (speedPi * speedPi * xd * xd))
	}
	return 0
}

// speedLanczos4 is lanczos4_interpolation: 9x9 taps, mirrored at the
// edges, normalised by the sum of the weights.
func speedLanczos4(src []float32, w, h int, x, y float32) float32 {
	const a = 4
	x0, y0 := int(math.Floor(float64(x))), int(math.Floor(float64(y)))
	dx, dy := x-float32(x0), y-float32(y0)
	var wx, wy [2*a + 1]float32
	for i := -a; i <= a; i++ {
		wx[i+a] = speedLanczosKernel(float32(i)-dx, a)
		wy[i+a] = speedLanczosKernel(float32(i)-dy, a)
	}
	rw, rh := float32(w-1), float32(h-1)
	var v, sum float32
	for iy := -a; iy <= a; iy++ {
		yi := int(speedMirrorF(float32(y0+iy), rh))
		for ix := -a; ix <= a; ix++ {
			weight := float32(wx[ix+a] * wy[iy+a])
			sum += weight
			xi := int(speedMirrorF(float32(x0+ix), rw))
			v += float32(src[yi*w+xi] * weight)
		}
	}
	return v / sum
}
