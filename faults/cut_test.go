package faults_test

import (
	"context"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/internal/leakcheck"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// A cut drops what a delay still holds, as it drops everything in flight:
// the request never reaches the server. (Before, the chunk waited out its
// delay, and a heal in that time could block on toxiproxy's flush of the
// dead connection for 5 s.)
func TestCutDropsDelayedRequest(t *testing.T) {
	db := pgscratch.NewDatabase(t)
	defer leakcheck.Start(t)()
	admin := connect(t, db.URL)
	defer admin.Close(context.Background())
	if _, err := admin.Exec(context.Background(), "CREATE TABLE t (id int)"); err != nil {
		t.Fatal(err)
	}
	n, addr := pgLink(t, db.URL)
	defer n.Close()
	c := connect(t, through(t, db.URL, addr))
	defer c.Close(context.Background())
	if err := n.Inject("actor", faults.Fault{Kind: faults.Latency, DelayMs: 1000}); err != nil {
		t.Fatal(err)
	}
	done := exec(c, "INSERT INTO t VALUES (1)", 100*time.Millisecond)
	if err := <-done; err == nil {
		t.Fatal("an INSERT delayed 1 s past its 100 ms deadline succeeded")
	}
	if err := n.Cut("actor"); err != nil {
		t.Fatal(err)
	}
	n.Heal("actor")
	time.Sleep(1500 * time.Millisecond) // past the delay
	if k := count(t, admin, 1); k != 0 {
		t.Fatalf("the delayed INSERT of a cut connection reached the server (%d rows)", k)
	}
}
