package loopcheck

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/internal/leakcheck"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// rowWriter enqueues a payment as one row of lost_commit, on either
// driver.
type rowWriter struct{ Subject }

const insertRow = `INSERT INTO lost_commit (id) VALUES ($1)`

func (rowWriter) Enqueue(ctx context.Context, tx pgx.Tx, p harness.Payment) error {
	_, err := tx.Exec(ctx, insertRow, p.ID)
	return err
}

func (rowWriter) EnqueueSQL(ctx context.Context, tx *sql.Tx, p harness.Payment) error {
	_, err := tx.ExecContext(ctx, insertRow, p.ID)
	return err
}

// The FIELD-NOTES trap on both of the harness's producers: the reply to
// COMMIT is lost, the row committed all the same, and the harness calls
// the payment maybe-committed (errCommit), never rolled back; the
// producer then drops the connection and the next payment goes through on
// a new one. On database/sql the same: whatever database/sql makes of
// pgx's error. Nothing the producers open outlives close.
func TestLostCommitReplyIsIndeterminateOnBothDrivers(t *testing.T) {
	db := pgscratch.NewDatabase(t)
	defer leakcheck.Start(t)() // the shared cluster's goroutines predate the test
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, `CREATE TABLE lost_commit (id text PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(db.URL)
	n := faults.NewNet(u.Host)
	defer n.Close()
	addr, err := n.Link("producer")
	if err != nil {
		t.Fatal(err)
	}
	through := *u
	through.Host = addr
	q := through.Query()
	q.Set("application_name", "lost-commit-producer")
	through.RawQuery = q.Encode()
	conn := func() string { return through.String() }
	for name, prod := range map[string]producer{
		"pgx":          &pgxProducer{connString: conn, subj: rowWriter{}},
		"database/sql": &sqlProducer{connString: conn, enq: rowWriter{}},
	} {
		t.Run(name, func(t *testing.T) {
			defer prod.close()
			pay := func(id string) error {
				cctx, cancel := context.WithTimeout(ctx, time.Second)
				defer cancel()
				err := transact(cctx, prod, true, harness.Payment{ID: name + "/" + id})
				if err != nil {
					prod.discard()
				}
				return err
			}
			if err := pay("before"); err != nil {
				t.Fatalf("a payment with no fault: %v", err)
			}
			if err := n.Inject("producer", faults.Fault{Kind: faults.LostReply, AtCommit: true}); err != nil {
				t.Fatal(err)
			}
			err := pay("lost")
			n.Heal("producer")
			var ce errCommit
			if !errors.As(err, &ce) {
				t.Fatalf("COMMIT's reply lost: error %v, want an indeterminate commit (errCommit)", err)
			}
			var found bool
			if err := admin.QueryRow(ctx, `SELECT count(*) = 1 FROM lost_commit WHERE id = $1`, name+"/lost").Scan(&found); err != nil {
				t.Fatal(err)
			}
			if !found {
				t.Fatalf("the lost reply was not COMMIT's (the row did not commit): %v", err)
			}
			t.Logf("COMMIT landed, the producer saw: %v", err)
			if err := pay("after"); err != nil {
				t.Fatalf("the payment after the lost reply: %v", err)
			}
		})
	}
	n.Close()
	waitNoSessions(t, admin, "lost-commit-producer")
}

// waitNoSessions fails t if sessions named app are still open 5 s on.
func waitNoSessions(t *testing.T, admin *pgx.Conn, app string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var n int
		if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions of %s still open after the producer closed", n, app)
		}
	}
}
