// Package text holds the string helpers every VMAFX program shares.
package text

import (
	"strings"
	"unicode/utf8"
)

// Ellipsis ends a line that OneLine cut.
const Ellipsis = "…"

// OneLine folds s onto one line (every run of white space becomes one space) and bounds it
// to limit bytes: a longer line is cut at a character boundary, never inside a UTF-8
// sequence, and ends with Ellipsis within the limit. Status messages, conditions, events
// and termination messages go through it, so a multi-line or huge error reads as one
// bounded line wherever it lands.
func OneLine(s string, limit int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= limit {
		return s
	}
	cut := max(limit-len(Ellipsis), 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if cut == 0 {
		if limit >= len(Ellipsis) {
			return Ellipsis
		}
		return ""
	}
	return s[:cut] + Ellipsis
}
