package refloop

import (
	"context"
	"time"

	"github.com/outboxcheck/outboxcheck/impl"
	"github.com/outboxcheck/outboxcheck/loopcheck"
	"github.com/outboxcheck/outboxcheck/properties"
)

// DeleteDead is a loop mutant of bug class (e), dead letters vanish: the
// relay deletes an event once it is DEAD and keeps no trace of it, so a
// poison or long-refused event is gone without a record. no-loss kills it.
func DeleteDead(ctx context.Context, env loopcheck.Env) (loopcheck.Subject, error) {
	s, err := Build(ctx, env, Options{Notify: true})
	if err != nil {
		return s, err
	}
	return deleteDead{s}, nil
}

type deleteDead struct{ *Subject }

func (d deleteDead) Dispatch(ctx context.Context, i int, pub properties.Publisher) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		sess, err := impl.NewSession(d.env.ConnString(properties.Actor{Role: properties.Dispatcher, N: i}))
		if err != nil {
			return
		}
		defer sess.Cut()
		for ctx.Err() == nil {
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			if conn, err := sess.Conn(cctx); err == nil {
				if _, err := conn.Exec(cctx, `DELETE FROM outbox_events WHERE status = 'DEAD'`); err != nil {
					sess.Cut()
				}
			}
			cancel()
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	err := d.Subject.Dispatch(ctx, i, pub)
	<-done
	return err
}
