package jobqueue_test

import (
	"strings"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/examples/jobqueue"
	"github.com/outboxcheck/outboxcheck/pgscratch"
	"github.com/outboxcheck/outboxcheck/properties"
)

func TestZZMeasureShrinkRuns(t *testing.T) {
	for _, c := range []struct {
		name, property string
		edit           func(*jobqueue.Queries)
		shrink         time.Duration
	}{
		{"fence", "fencing", func(q *jobqueue.Queries) {
			q.Complete = strings.Replace(q.Complete, "AND attempt_token = $2", "AND $2::text IS NOT NULL", 1)
		}, 4 * time.Minute},
		{"rescue", "no-loss", func(q *jobqueue.Queries) {
			q.Rescue = strings.Replace(q.Rescue, "lease_until < $1", "lease_until < $1 AND lease_until > $1 - interval '1 minute'", 1)
		}, 2 * time.Minute},
	} {
		sql := jobqueue.DefaultQueries()
		c.edit(&sql)
		db := pgscratch.NewDatabase(t)
		restore := properties.Budget{Checks: 300, Seed: 1, ShrinkTime: c.shrink}.Apply()
		runs, best := 0, 1<<30
		var trace []string
		opts := properties.Options{DatabaseURL: db.URL, Semantics: semantics(config), OnCheck: func(h *properties.History) {
			if !h.Shrinking {
				return
			}
			runs++
			if n := len(h.Entries); n > 0 && strings.Contains(h.Entries[n-1].Expect, c.property) && n < best {
				best = n
				trace = append(trace, time.Now().Format("15:04:05")+" run "+itoa(runs)+": "+itoa(n)+" steps")
			}
		}}
		rec := properties.NewRecorder(t.Name(), nil)
		sum := properties.Run(rec, newAdapter(sql), opts)
		restore()
		t.Logf("%s: %v steps final, shrink runs %d, trace %v", c.name, len(sum.Failure.History.Entries), sum.ShrinkRuns, trace)
	}
}

func itoa(n int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + fmtInt(n)) }
func fmtInt(n int) string {
	if n == 0 {
		return "0"
	}
	s := ""
	for n > 0 {
		s = string(rune('0'+n%10)) + s
		n /= 10
	}
	return s
}
