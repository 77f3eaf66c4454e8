package mcpserver

import (
	"slices"
	"strconv"
)

// sortByScore puts scored jobs first, highest score first; unscored ones keep their order.
func sortByScore(js []JobSummary) {
	slices.SortStableFunc(js, func(a, b JobSummary) int {
		sa, errA := strconv.ParseFloat(a.Score, 64)
		sb, errB := strconv.ParseFloat(b.Score, 64)
		switch {
		case errA != nil && errB != nil:
			return 0
		case errA != nil:
			return 1
		case errB != nil:
			return -1
		case sa > sb:
			return -1
		case sa < sb:
			return 1
		}
		return 0
	})
}
