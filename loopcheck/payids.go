package loopcheck

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// maxRanges is how many ranges of payments a message lists before it
// counts the rest.
const maxRanges = 8

// payNumber is the number of a payment's id ("pay-42": 42); ok is false
// for an id of another shape.
func payNumber(id string) (n int, ok bool) {
	i := strings.LastIndexByte(id, '-')
	n, err := strconv.Atoi(id[i+1:])
	return n, err == nil
}

// comparePay orders payment ids by their number (pay-42 before pay-100),
// ids of another shape after, as text.
func comparePay(a, b string) int {
	na, oka := payNumber(a)
	nb, okb := payNumber(b)
	switch {
	case oka && okb && na != nb:
		return na - nb
	case oka != okb:
		if oka {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

// byNumber lists m's payments in numeric order.
func byNumber[V any](m map[string]V) []string {
	return slices.SortedFunc(maps.Keys(m), comparePay)
}

// payRanges writes ids (in numeric order) as ranges: "pay-3..pay-17,
// pay-42", at most the first most ranges, then how many payments more.
func payRanges(ids []string, most int) string {
	var out []string
	rest := 0
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && consecutive(ids[j], ids[j+1]) {
			j++
		}
		switch {
		case len(out) == most:
			rest += j - i + 1
		case j == i:
			out = append(out, ids[i])
		default:
			out = append(out, ids[i]+".."+ids[j])
		}
		i = j + 1
	}
	if rest > 0 {
		out = append(out, fmt.Sprintf("and %d more", rest))
	}
	return strings.Join(out, ", ")
}

// consecutive says whether b is the payment right after a.
func consecutive(a, b string) bool {
	na, oka := payNumber(a)
	nb, okb := payNumber(b)
	return oka && okb && nb == na+1 && strings.TrimSuffix(a, strconv.Itoa(na)) == strings.TrimSuffix(b, strconv.Itoa(nb))
}
