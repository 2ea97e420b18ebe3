package faults_test

import (
	"context"
	"testing"
	"time"

	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/internal/leakcheck"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// A lost reply armed at the next statement strikes the statement itself,
// however many requests come before it: on a connection made after the
// injection (startup, authentication and preparing all pass) the INSERT
// runs, autocommit, and only its reply is lost.
func TestLostReplyAtStatementRunsTheStatement(t *testing.T) {
	db := pgscratch.NewDatabase(t)
	defer leakcheck.Start(t)()
	admin := connect(t, db.URL)
	defer admin.Close(context.Background())
	if _, err := admin.Exec(context.Background(), `CREATE TABLE t (id int)`); err != nil {
		t.Fatal(err)
	}
	n, addr := pgLink(t, db.URL)
	defer n.Close()
	if err := n.Inject("actor", faults.Fault{Kind: faults.LostReply, AtStatement: true}); err != nil {
		t.Fatal(err)
	}
	c := connect(t, through(t, db.URL, addr))
	defer c.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.Exec(ctx, `INSERT INTO t VALUES ($1)`, 1); err == nil {
		t.Fatal("the INSERT's reply was to be lost, yet it succeeded")
	}
	n.Heal("actor")
	deadline := time.Now().Add(5 * time.Second)
	for count(t, admin, 1) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if k := count(t, admin, 1); k != 1 {
		t.Fatalf("%d rows: the statement struck at its reply did not run", k)
	}
}
