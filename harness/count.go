package harness

import (
	"fmt"
	"strings"
)

// Count is n of unit, given in the plural, and said in the singular for
// one: "1 step", "2 steps", "1 retry", "2 end states".
func Count(n int, unit string) string {
	if n == 1 {
		switch {
		case strings.HasSuffix(unit, "ies"):
			unit = strings.TrimSuffix(unit, "ies") + "y"
		case strings.HasSuffix(unit, "s"):
			unit = strings.TrimSuffix(unit, "s")
		}
	}
	return strings.TrimSpace(fmt.Sprintf("%d %s", n, unit))
}

// Bytes is n bytes for a reader: B, KiB or MiB, one decimal.
func Bytes(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1024*1024))
}
