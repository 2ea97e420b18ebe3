package properties_test

import (
	"testing"

	"github.com/outboxcheck/outboxcheck/adapters/reference"
	"github.com/outboxcheck/outboxcheck/internal/pgtest"
	"github.com/outboxcheck/outboxcheck/properties"
)

func TestZZDebug(t *testing.T) {
	db := pgtest.Database(t)
	counts := map[string]int{}
	var last *properties.History
	n := 0
	properties.Exercise(t, reference.New, properties.Options{DatabaseURL: db.URL, OnCheck: func(h *properties.History) {
		for _, e := range h.Entries {
			counts[e.Action]++
			if len(e.Result) > 5 && e.Result[:5] == "error" {
				counts["err:"+e.Action]++
			}
		}
		n++
		if n == 50 {
			last = h
		}
	}})
	t.Log(counts)
	t.Log("\n" + last.Story())
}
