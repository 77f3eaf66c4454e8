package vmaf

import (
	"bufio"
	"io"
	"math"
	"strconv"
)

// Version is written as the "version" of JSON output.
const Version = "vmafx-libvmaf-3.2.0"

// WriteJSON writes r in libvmaf's JSON log layout (output.c,
// vmaf_write_output_json): "frames" with "frameNum" and "metrics", then
// "pooled_metrics" with min, max, mean and harmonic_mean per metric, values
// printed with six decimals and non-finite values as null.
func (r *Result) WriteJSON(w io.Writer) error {
	bw := bufio.NewWriter(w)
	names := r.Metrics()
	var num []byte
	value := func(v float64) []byte {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return append(num[:0], "null"...)
		}
		return strconv.AppendFloat(num[:0], v, 'f', 6, 64)
	}
	bw.WriteString("{\n  \"version\": \"" + Version + "\",\n")
	bw.WriteString("  \"fps\": ")
	bw.Write(value(r.FPS))
	bw.WriteString(",\n  \"frames\": [")
	var vals []float64
	for i := range r.Frames {
		f := &r.Frames[i]
		if i > 0 {
			bw.WriteString(",")
		}
		bw.WriteString("\n    {\n      \"frameNum\": " + strconv.Itoa(f.Index) + ",\n      \"metrics\": {\n")
		vals = r.values(f, vals)
		for k, n := range names {
			bw.WriteString("        \"" + n + "\": ")
			bw.Write(value(vals[k]))
			if k < len(names)-1 {
				bw.WriteString(",")
			}
			bw.WriteString("\n")
		}
		bw.WriteString("      }\n    }")
	}
	bw.WriteString("\n  ],\n  \"pooled_metrics\": {")
	for k, n := range names {
		p := r.Pooled[n]
		if k > 0 {
			bw.WriteString(",")
		}
		bw.WriteString("\n    \"" + n + "\": {\n")
		for j, s := range [4]struct {
			name string
			v    float64
		}{{"min", p.Min}, {"max", p.Max}, {"mean", p.Mean}, {"harmonic_mean", p.HarmonicMean}} {
			bw.WriteString("      \"" + s.name + "\": ")
			bw.Write(value(s.v))
			if j < 3 {
				bw.WriteString(",")
			}
			bw.WriteString("\n")
		}
		bw.WriteString("    }")
	}
	bw.WriteString("\n  },\n  \"aggregate_metrics\": {\n  }\n}\n")
	return bw.Flush()
}
