package vmaf

import "math"

// The small dense linear algebra of SpEED's est_params (speed.c): the
// eigenvalues of the 25x25 covariance matrix (Householder tridiagonalisation
// and implicit symmetric QR steps, adapted from GSL's symmtd.c and symm.c)
// and the solution of K X = Y by a Householder QR decomposition with full
// matrix products and back substitution. All in float, in libvmaf's order;
// the matrices are row-major n x n with n = speedBlockLen.

const speedN = speedBlockLen

// speedSign is get_sign: 1 for x >= 0 (and -0), else -1.
func speedSign(x float32) float32 {
	if x >= 0 {
		return 1
	}
	return -1
}

// speedSqrt is C's sqrt of a float expression assigned to a float.
func speedSqrt(x float32) float32 { return float32(math.Sqrt(float64(x))) }

// speedHypot is pythagoras: sqrt(x*x + y*y), the sum in float.
func speedHypot(x, y float32) float32 { return speedSqrt(float32(x*x) + float32(y*y)) }

// speedMatMul is matrix_mul: dst (xr x yc) = x (xr x xc) * y (xc x yc),
// each element summed over k from 0 in float. The loop runs k outside j, as
// libvmaf's does, which leaves each element's order of additions unchanged
// and lets the inner loop run along rows.
func speedMatMul(axpy speedAxpy, dst, x, y []float32, xr, xc, yc int) {
	dst = dst[:xr*yc]
	clear(dst)
	for i := range xr {
		drow := dst[i*yc : (i+1)*yc]
		xrow := x[i*xc : (i+1)*xc]
		for k, a := range xrow {
			axpy(drow, y[k*yc:(k+1)*yc], a)
		}
	}
}

// speedTranspose is matrix_transpose of an n x n matrix, in place.
func speedTranspose(m []float32) {
	for i := range speedN {
		for j := range i {
			m[i*speedN+j], m[j*speedN+i] = m[j*speedN+i], m[i*speedN+j]
		}
	}
}

// speedIdentity is matrix_identity.
func speedIdentity(m []float32) {
	clear(m[:speedN*speedN])
	for i := range speedN {
		m[i*speedN+i] = 1
	}
}

// speedNorm is vector_norm: the float sum of squares, square-rooted.
func speedNorm(x []float32) float32 {
	var sum float32
	for _, v := range x {
		sum += float32(v * v)
	}
	return speedSqrt(sum)
}

// speedLinalg holds est_params' matrix scratch for one state.
type speedLinalg struct {
	a, q, r, tq, tz [speedN * speedN]float32 // the QR's matrices
	ev              [speedN * speedN]float32 // the eigenvalue solver's copy
	d, sd, v, x     [speedN]float32
	axpy            speedAxpy
}

// qr is matrix_qr_decomposition of a: Q (in l.q, transposed back as
// libvmaf leaves it) and R (in l.r) with a = Q R. Each step builds the
// full Householder matrix I - 2 v v^T and multiplies it in, as libvmaf does.
func (l *speedLinalg) qr(a []float32) {
	const n = speedN
	q, r, tq, tz := l.q[:], l.r[:], l.tq[:], l.tz[:]
	copy(tz, a[:n*n])
	speedIdentity(q)
	vec := r[:n] // R doubles as the vector until the end, as in libvmaf
	for k := range n - 1 {
		// matrix_minor: the first k rows and columns become the identity's.
		for i := range n {
			for j := range n {
				if i < k || j < k {
					if i == j {
						tz[i*n+j] = 1
					} else {
						tz[i*n+j] = 0
					}
				}
			}
		}
		for i := range n {
			vec[i] = tz[i*n+k]
		}
		norm := speedNorm(vec)
		vec[k] += speedSign(a[k*n+k]) * norm
		d := speedNorm(vec)
		for i := range n {
			vec[i] /= d
		}
		// matrix_identity_minus_v_vt: -2 * v[i] * v[j], then 1 on the diagonal.
		for i := range n {
			m := -2 * vec[i]
			for j := range n {
				tq[i*n+j] = m * vec[j]
			}
		}
		for i := range n {
			tq[i*n+i] += 1
		}
		fast := d != 0
		for _, v := range vec {
			fast = fast && speedFinite(v)
		}
		if fast {
			l.applyReflector(k)
			continue
		}
		speedMatMul(l.axpy, r, tq, tz, n, n, n)
		copy(tz, r)
		speedMatMul(l.axpy, r, tq, q, n, n, n)
		copy(q, r)
	}
	speedMatMul(l.axpy, r, q, a, n, n, n)
	speedTranspose(q)
}

// applyReflector does step k's two full products, tz = tq tz and q = tq q,
// with the work their structure makes moot, giving the same bits. Here v's
// first k elements are +0 (tz's column k was zeroed above row k by
// matrix_minor, then divided by a finite d), so tq's rows and columns
// before k are the identity's, their off-diagonal elements ±0. A ±0 term
// leaves a float sum that starts at +0 (matrix_zero) bit for bit as it is,
// so each element of a row i >= k sums over m >= k only, in libvmaf's
// order. A row i < k of a product is the other factor's row with -0 turned
// into +0 (1*x plus ±0 terms). And the next step's matrix_minor overwrites
// tz's rows and columns up to k, so only tz's trailing block past k is
// computed. The cost per step falls from 2n^3 to about (n-k)^3 + (n-k)^2 n.
func (l *speedLinalg) applyReflector(k int) {
	const n = speedN
	q, r, tq, tz := l.q[:], l.r[:], l.tq[:], l.tz[:]
	for i := k + 1; i < n; i++ {
		drow := r[i*n+k+1 : i*n+n]
		clear(drow)
		for m := k; m < n; m++ {
			l.axpy(drow, tz[m*n+k+1:m*n+n], tq[i*n+m])
		}
	}
	for i := k + 1; i < n; i++ {
		copy(tz[i*n+k+1:i*n+n], r[i*n+k+1:i*n+n])
	}
	for i := k; i < n; i++ {
		drow := r[i*n : i*n+n]
		clear(drow)
		for m := k; m < n; m++ {
			l.axpy(drow, q[m*n:m*n+n], tq[i*n+m])
		}
	}
	copy(q[k*n:], r[k*n:n*n])
	for i, v := range q[:k*n] {
		if v == 0 {
			q[i] = 0 // -0 becomes +0, as in the full product
		}
	}
}

// speedFinite reports whether x is neither infinite nor NaN.
func speedFinite(x float32) bool { return x-x == 0 }

// solve is solve_linear_system: X (n x cols, in x) with K X = B by K = Q R
// and back substitution on R X = Q^T B (solve_triangular_system), using
// rect (n x cols) as scratch. It reports false, leaving x partly written,
// where a diagonal element of R is below EIGENVALUE_EPS in magnitude.
func (l *speedLinalg) solve(k, b, x, rect []float32, cols int) bool {
	const n = speedN
	copy(l.a[:], k[:n*n])
	l.qr(l.a[:])
	speedTranspose(l.q[:])
	speedMatMul(l.axpy, rect, l.q[:], b, n, n, cols)
	r := l.r[:]
	for i := n - 1; i >= 0; i-- {
		den := r[i*n+i]
		if float64(speedAbs(den)) < speedEigenEps {
			return false
		}
		for j := range cols {
			t := rect[i*cols+j]
			for kk := i + 1; kk < n; kk++ {
				t -= float32(x[kk*cols+j] * r[i*n+kk])
			}
			x[i*cols+j] = t / den
		}
	}
	return true
}

// eigenvalues is compute_eigenvalues: the eigenvalues of the symmetric
// matrix k, unsorted, into out.
func (l *speedLinalg) eigenvalues(k, out []float32) {
	const n = speedN
	d, sd := l.d[:], l.sd[:n-1]
	copy(l.ev[:], k[:n*n])
	l.tridiagonalize()
	speedChop(d, sd)
	b, iter := n-1, 0
	for b > 0 && iter < speedEigenIter {
		if sd[b-1] == 0 {
			b--
			continue
		}
		// The largest unreduced block ending at b.
		lo := b - 1
		for lo > 0 && sd[lo-1] != 0 {
			lo--
		}
		speedQRStep(d[lo:b+1], sd[lo:b])
		speedChop(d[lo:b+1], sd[lo:b])
		iter++
	}
	copy(out, d)
}

// tridiagonalize is convert_to_tridiagonal on l.ev: n-2 Householder
// transformations, each applied to the trailing submatrix, leaving the
// diagonal in l.d and the subdiagonal in l.sd.
func (l *speedLinalg) tridiagonalize() {
	const n = speedN
	a, v, x := l.ev[:], l.v[:], l.x[:]
	for i := range n - 2 {
		tau := speedHouseholder(a, i, i+1)
		for j := i + 1; j < n; j++ {
			v[j] = a[j*n+i]
		}
		if tau == 0 {
			continue
		}
		a[(i+1)*n+i] = v[i+1]
		v[i+1] = 1
		// x = tau A v
		for r := i + 1; r < n; r++ {
			var acc float32
			row := a[r*n : r*n+n]
			for c := i + 1; c < n; c++ {
				acc += float32(float32(tau*row[c]) * v[c])
			}
			x[r] = acc
		}
		// x -= 0.5 tau (x . v) v
		var xv float32
		for r := i + 1; r < n; r++ {
			xv += float32(x[r] * v[r])
		}
		alpha := float32(-0.5 * float64(tau) * float64(xv))
		for r := i + 1; r < n; r++ {
			x[r] += float32(alpha * v[r])
		}
		// A -= x v' + v x'
		for r := i + 1; r < n; r++ {
			for c := i + 1; c < n; c++ {
				a[r*n+c] -= float32(x[r]*v[c]) + float32(v[r]*x[c])
			}
		}
	}
	for i := range n {
		l.d[i] = a[i*n+i]
	}
	for i := range n - 1 {
		l.sd[i] = a[(i+1)*n+i]
	}
}

// speedHouseholder is compute_householder_transform on column col of the
// n x n matrix a from row start: it returns tau and leaves v (scaled so
// that its first element is 1, not stored) below beta in the column.
func speedHouseholder(a []float32, col, start int) float32 {
	const n = speedN
	if n-start == 1 {
		return 0
	}
	var sum float32 // compute_column_norm from start+1
	for i := start + 1; i < n; i++ {
		sum += float32(a[i*n+col] * a[i*n+col])
	}
	xnorm := speedSqrt(sum)
	if xnorm == 0 {
		return 0
	}
	alpha := a[start*n+col]
	beta := -speedSign(alpha) * speedHypot(alpha, xnorm)
	tau := (beta - alpha) / beta
	if s := alpha - beta; s != 0 {
		for i := start; i < n; i++ {
			a[i*n+col] /= s
		}
		a[start*n+col] = beta
	}
	return tau
}

// speedChop is chop_small_elements: subdiagonal elements negligible next
// to their diagonal neighbours become 0 (the comparison in double).
func speedChop(d, sd []float32) {
	for i := range sd {
		if float64(speedAbs(sd[i])) < speedEigenEps*float64(speedAbs(d[i])+speedAbs(d[i+1])) {
			sd[i] = 0
		}
	}
}

// speedTrailingEigenvalue is trailing_eigenvalue: Wilkinson's shift from
// the trailing 2x2 block.
func speedTrailingEigenvalue(d, sd []float32) float32 {
	n := len(d)
	ta, tb, tab := d[n-2], d[n-1], sd[n-2]
	dt := float32(float64(ta-tb) / 2.0)
	switch {
	case dt > 0:
		return tb - float32(tab*(tab/(dt+speedHypot(dt, tab))))
	case dt == 0:
		return tb - speedAbs(tab)
	default:
		return tb + float32(tab*(tab/(-dt+speedHypot(dt, tab))))
	}
}

// speedGivens is create_givens: c and s with [c s; -s c]^T [a; b] having
// a zero second element.
func speedGivens(a, b float32) (c, s float32) {
	switch {
	case b == 0:
		return 1, 0
	case speedAbs(b) > speedAbs(a):
		t := -a / b
		s1 := float32(1.0 / math.Sqrt(float64(1+float32(t*t))))
		return float32(s1 * t), s1
	default:
		t := -b / a
		c1 := float32(1.0 / math.Sqrt(float64(1+float32(t*t))))
		return c1, float32(c1 * t)
	}
}

// speedRot computes libvmaf's rotated 2x2 entries of G' T G from c, s and
// ap, bp, aq, bq = the block's (p,p), (p,q), (q,q) elements (qr_step's
// ap1, bp1, aq1).
func speedRot(c, s, ap, bp, aq float32) (ap1, bp1, aq1 float32) {
	// c*(c*ap - s*bp) + s*(s*aq - c*bp)
	ap1 = float32(c*(float32(c*ap)-float32(s*bp))) + float32(s*(float32(s*aq)-float32(c*bp)))
	// c*(s*ap + c*bp) - s*(s*bp + c*aq)
	bp1 = float32(c*(float32(s*ap)+float32(c*bp))) - float32(s*(float32(s*bp)+float32(c*aq)))
	// s*(s*ap + c*bp) + c*(s*bp + c*aq)
	aq1 = float32(s*(float32(s*ap)+float32(c*bp))) + float32(c*(float32(s*bp)+float32(c*aq)))
	return
}

// speedQRStep is qr_step: one implicit symmetric QR step with Wilkinson's
// shift on the unreduced tridiagonal block (d, sd), len(sd) = len(d)-1.
func speedQRStep(d, sd []float32) {
	n := len(d)
	mu := speedTrailingEigenvalue(d, sd)
	if speedEigenEps*float64(speedAbs(mu)) > float64(speedAbs(d[0])+speedAbs(sd[0])) {
		mu = 0
	}
	x, z := d[0]-mu, sd[0]
	var bk, zk float32
	ap, bp, aq := d[0], sd[0], d[1]
	if n == 2 {
		c, s := speedGivens(x, z)
		ap1, bp1, aq1 := speedRot(c, s, ap, bp, aq)
		d[0], sd[0], d[1] = ap1, bp1, aq1
		return
	}
	bq := sd[1]
	for k := range n - 1 {
		c, s := speedGivens(x, z)
		bk1 := float32(c*bk) - float32(s*zk)
		ap1, bp1, aq1 := speedRot(c, s, ap, bp, aq)
		zp1 := -s * bq
		bq1 := c * bq
		bk, zk = bp1, zp1
		ap, bp = aq1, bq1
		if k < n-2 {
			aq = d[k+2]
		}
		if k < n-3 {
			bq = sd[k+2]
		}
		d[k] = ap1
		if k > 0 {
			sd[k-1] = bk1
		}
		if k < n-2 {
			sd[k+1] = bp
		}
		x, z = bk, zk
	}
	d[n-1] = ap
	sd[n-2] = bk
}
