package reports

import (
	"strings"
	"unicode"
)

// words turns a key into words for a label: "consumer_reached" and
// "consumer-reached" read "consumer reached", "MarkPublished" reads
// "mark published". Keys stay keys in report.json and report.md.
func words(key string) string {
	var b strings.Builder
	prev := rune(0)
	for _, r := range key {
		switch {
		case r == '_' || r == '-':
			r = ' '
		case unicode.IsUpper(r) && prev != 0 && !unicode.IsUpper(prev) && prev != ' ':
			b.WriteByte(' ')
			r = unicode.ToLower(r)
		case unicode.IsUpper(r) && prev == 0:
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
		prev = r
	}
	return b.String()
}
