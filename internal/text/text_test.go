package text

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestOneLine(t *testing.T) {
	cases := []struct {
		in    string
		limit int
		want  string
	}{
		{"a\n  b\tc ", 10, "a b c"},
		{"abcdefghij", 10, "abcdefghij"},
		{"abcdefghijk", 10, "abcdefg…"},
		{"ééééé", 8, "éé…"}, // 10 bytes; the cut falls inside the third é
		{"abc", 0, ""},
	}
	for _, tc := range cases {
		if got := OneLine(tc.in, tc.limit); got != tc.want {
			t.Errorf("OneLine(%q, %d) = %q, want %q", tc.in, tc.limit, got, tc.want)
		}
	}
}

func FuzzOneLine(f *testing.F) {
	f.Add("héllo\nwörld", 7)
	f.Add(strings.Repeat("日本", 50), 31)
	f.Add("\xff\xfe", 1)
	f.Fuzz(func(t *testing.T, s string, limit int) {
		if limit < 0 || limit > 1<<16 {
			return
		}
		got := OneLine(s, limit)
		if len(got) > limit {
			t.Fatalf("OneLine(%q, %d) = %q: %d bytes", s, limit, got, len(got))
		}
		if strings.ContainsAny(got, "\n\r\t") {
			t.Fatalf("OneLine(%q) = %q: not one line", s, got)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("OneLine(%q, %d) = %q: cut inside a character", s, limit, got)
		}
	})
}
