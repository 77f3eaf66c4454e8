package align

import (
	"fmt"

	"github.com/vmafx/vmafx/media/decode"
)

// RateMatch is how two frame rates relate.
type RateMatch int

const (
	// RateSame: equal rates, or one of them unknown (raw YUV carries none).
	RateSame RateMatch = iota
	// RateNTSC: the rates differ by the NTSC factor 1000/1001 (24 and 24000/1001, 30
	// and 30000/1001, ...). Such a pair shows the same pictures, one of them retimed by
	// 0.1% (a "speed change"), so frames pair by index and can be aligned safely.
	RateNTSC
	// RateMultiple: one rate is a whole multiple of the other (25 and 50): a frame-rate
	// conversion that drops or repeats frames, which pairing by index does not undo.
	RateMultiple
	// RateOther: any other difference (25 and 30): a conversion that blends or drops
	// frames unevenly.
	RateOther
)

// CompareRates classifies the reference's and the distorted's frame rates.
func CompareRates(ref, dist decode.Rate) RateMatch {
	if !ref.Known() || !dist.Known() || ref.Equal(dist) {
		return RateSame
	}
	// r = ref/dist as a fraction a/b.
	a, b := int64(ref.Num)*int64(dist.Den), int64(ref.Den)*int64(dist.Num)
	if a*1001 == b*1000 || a*1000 == b*1001 {
		return RateNTSC
	}
	if a%b == 0 || b%a == 0 {
		return RateMultiple
	}
	return RateOther
}

// RateMessage says, for people, how the rates differ and what to do; "" for RateSame.
func RateMessage(ref, dist decode.Rate) string {
	lo, hi, faster := ref, dist, "distorted"
	if float64(ref.Num)/float64(ref.Den) > float64(dist.Num)/float64(dist.Den) {
		lo, hi, faster = dist, ref, "reference"
	}
	switch CompareRates(ref, dist) {
	case RateNTSC:
		return fmt.Sprintf("reference %s fps, distorted %s fps: the same pictures retimed by 1000/1001 (NTSC)", ref, dist)
	case RateMultiple:
		n := (int64(hi.Num) * int64(lo.Den)) / (int64(hi.Den) * int64(lo.Num))
		return fmt.Sprintf("reference %s fps, distorted %s fps: the %s has %d times the other's frame rate, a frame-rate conversion that pairing frames by index does not undo; give --auto-align (spec.alignment.auto) to score every %s frame of the %s against the other's, convert it to %s fps first (ffmpeg -vf fps=%s), or give --align (spec.alignment with starts) to pair frames by index anyway",
			ref, dist, faster, n, ordinal(int(n)), faster, lo, lo)
	case RateOther:
		return fmt.Sprintf("reference %s fps, distorted %s fps: a frame-rate conversion that pairing frames by index does not undo; convert the %s to %s fps first (ffmpeg -vf fps=%s), or give --align (spec.alignment with starts) to pair frames by index anyway",
			ref, dist, faster, lo, lo)
	}
	return ""
}

// Factor is how many times faster one input's frame rate is than the other's, for rates
// that are whole multiples (RateMultiple), and which input is the faster: 0 the
// reference, 1 the distorted. It is 1 for any other pair.
func Factor(ref, dist decode.Rate) (n, faster int) {
	if CompareRates(ref, dist) != RateMultiple {
		return 1, 0
	}
	a, b := int64(ref.Num)*int64(dist.Den), int64(ref.Den)*int64(dist.Num) // ref/dist = a/b
	if a > b {
		return int(a / b), 0
	}
	return int(b / a), 1
}

// ordinal is "2nd", "3rd", "4th" ...
func ordinal(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return fmt.Sprintf("%dth", n)
	case n%10 == 2:
		return fmt.Sprintf("%dnd", n)
	case n%10 == 3:
		return fmt.Sprintf("%drd", n)
	case n%10 == 1:
		return fmt.Sprintf("%dst", n)
	}
	return fmt.Sprintf("%dth", n)
}
