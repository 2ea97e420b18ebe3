package model

import (
	"strings"
	"testing"
)

// Delete on success: a successful mark removes the row, the read-back
// expects it absent, and the event must still be delivered; an unknown
// mark is settled by whether the row is there; a row that goes without a
// mark is lost.
func TestDeleteOnSuccess(t *testing.T) {
	sem := SeedSemantics()
	sem.DeleteOnSuccess = true
	s := committed(t, New(t0, sem), "p", "e")
	s, _ = claim(t, s, "k", 1, Claimed{ID: "e", Attempts: 1})
	claimed := s.Rows["e"]
	s, ps := Publish(s, "e", `{"p":1}`)
	wantNone(t, ps)

	_, ps = Observe(s, Observed{Rows: map[string]Row{}}, false)
	wantProblem(t, ps, NoLoss) // gone without a mark

	done, ps := MarkPublished(s, "e", "k", true, Done)
	wantNone(t, ps)
	if _, ok := done.Rows["e"]; ok || done.Gone["e"].Status != Published {
		t.Fatalf("a successful mark left %+v, gone %+v", done.Rows["e"], done.Gone["e"])
	}
	_, ps = Observe(done, Observed{Rows: map[string]Row{}}, false)
	wantNone(t, ps)
	if ps := Liveness(done); len(ps) != 1 || !strings.Contains(ps[0].Detail, "deleted but never delivered") {
		t.Fatalf("liveness of a deleted, undelivered event: %v", ps)
	}
	wantNone(t, Liveness(Deliver(done, 0, Acked)))

	maybe, ps := MarkPublished(s, "e", "k", false, Unknown)
	wantNone(t, ps)
	gone, ps := Observe(maybe, Observed{Rows: map[string]Row{}}, false)
	wantNone(t, ps)
	if _, ok := gone.Gone["e"]; !ok {
		t.Fatal("an unknown mark read back absent is not counted deleted")
	}
	kept, ps := Observe(maybe, Observed{Rows: map[string]Row{"e": claimed}}, false)
	wantNone(t, ps)
	if kept.Rows["e"].Status != Publishing {
		t.Fatalf("an unknown mark read back present: %v", kept.Rows["e"].Status)
	}

	// Deleted inside Publish, once the broker has it: allowed.
	_, ps = Observe(s, Observed{Rows: map[string]Row{}, Published: "k"}, false)
	wantNone(t, ps)
}
