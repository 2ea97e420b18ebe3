// How a problem's detail writes a row's fields: an instant, or a claim_id
// that may be none.

package model

import "time"

func stamp(t time.Time) string {
	if t.IsZero() {
		return "NULL"
	}
	return t.Format("Jan 2 15:04:05.000")
}

func orNone(s string) string {
	if s == "" {
		return "(no claim)"
	}
	return s
}
