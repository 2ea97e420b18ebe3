package stepcheck

import (
	"context"
	"fmt"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
	"github.com/outboxcheck/outboxcheck/model"
)

// A step subject acts only inside its calls (the step contract), so after
// a step that made no subject call (a clock move, a restart, a partition
// put on or healed, a crash that cut a session between calls) the
// database holds what the last read-back read: the check of that step
// uses it again instead of reading every row and effect anew. On the
// database's clock (Options.DatabaseClock) a clock move is read anew too:
// a subject's read-back may compute what it reports from now(). Only Stats,
// which takes the harness's time, is asked again when the clock moved. A
// database crash forgets it all: recovery may change what is stored
// (unlogged tables come back empty).

// priorRead is the last read-back.
type priorRead struct {
	obs     model.Observed
	ps      []model.Problem
	at      time.Time // the harness time rows and effects were read at
	ops     bool      // next and stats were read
	nextAt  time.Time
	next    bool
	stats   Stats
	statsAt time.Time // the harness time stats were asked for
}

// readBack returns the subject's rows and effects in the model's terms.
func (m *machine) readBack() (model.Observed, []model.Problem, error) {
	if p := m.prior; !m.called && p != nil && (m.run.clock == nil || p.at.Equal(m.m.Now)) {
		return p.obs, p.ps, nil
	}
	if m.readsAll() {
		return m.readAll()
	}
	var rows []Row
	var effects map[string]int
	err := m.doAs(harness.Actor{Role: harness.Operator}, harness.SpentReadBacks, func(ctx context.Context) (err error) {
		if rows, err = m.subj.Rows(ctx); err != nil {
			return fmt.Errorf("rows: %w", err)
		}
		effects, err = m.subj.Effects(ctx)
		return err
	})
	if err != nil {
		m.prior = nil
		return model.Observed{}, nil, err
	}
	obs, ps := observed(m.opts.Semantics, rows, effects)
	m.prior, m.called = &priorRead{obs: obs, ps: ps, at: m.m.Now}, false
	return obs, ps, nil
}

// readsAll reports whether the subject reads everything back in one call
// (ReadBacker), and the harness asks it all: it then does, instead of
// Rows and Effects and later Stats and NextAttemptAt.
func (m *machine) readsAll() bool {
	t, ok := m.subj.(tallied)
	if !ok {
		return false
	}
	_, ok = t.Subject.(ReadBacker)
	return ok && m.opts.Semantics.Has(model.OpStats) && m.opts.Semantics.Has(model.OpNextAttemptAt)
}

// readAll is readBack through ReadBacker: one call, after which readOps
// has what it asks at this time.
func (m *machine) readAll() (model.Observed, []model.Problem, error) {
	var rb ReadBack
	err := m.doAs(harness.Actor{Role: harness.Operator}, harness.SpentReadBacks, func(ctx context.Context) (err error) {
		rb, err = m.subj.(tallied).ReadBack(ctx, m.m.Now)
		return err
	})
	if err != nil {
		m.prior = nil
		return model.Observed{}, nil, err
	}
	obs, ps := observed(m.opts.Semantics, rb.Rows, rb.Effects)
	m.prior, m.called = &priorRead{obs: obs, ps: ps, at: m.m.Now, ops: true, nextAt: rb.NextAttemptAt,
		next: rb.HasNext, stats: rb.Stats, statsAt: m.m.Now}, false
	return obs, ps, nil
}

// readOps returns what an operator sees: Stats at the harness's time, and
// NextAttemptAt. It asks again only what may have changed since the last
// read-back (readBack runs first). An operation the subject's semantics
// leave out is not asked: Stats reads as the model's, NextAttemptAt as
// the model's next attempt.
func (m *machine) readOps() (st Stats, nextAt time.Time, next bool, err error) {
	p := m.prior
	sem := m.opts.Semantics
	if p != nil && p.ops && p.statsAt.Equal(m.m.Now) && sem.Has(model.OpStats) && sem.Has(model.OpNextAttemptAt) {
		return p.stats, p.nextAt, p.next, nil
	}
	reuseNext := p != nil && p.ops
	st = m.m.ExpectedStats()
	nextAt, next = m.m.NextAttemptAt()
	askStats, askNext := sem.Has(model.OpStats), sem.Has(model.OpNextAttemptAt) && !reuseNext
	if reuseNext && sem.Has(model.OpNextAttemptAt) {
		nextAt, next = p.nextAt, p.next
	}
	if askStats || askNext {
		err = m.doAs(harness.Actor{Role: harness.Operator}, harness.SpentReadBacks, func(ctx context.Context) (err error) {
			if askStats {
				if st, err = m.subj.Stats(ctx, m.m.Now); err != nil {
					return fmt.Errorf("stats: %w", err)
				}
			}
			if askNext {
				nextAt, next, err = m.subj.NextAttemptAt(ctx)
			}
			return err
		})
	}
	if err != nil || p == nil {
		return st, nextAt, next, err
	}
	p.ops, p.nextAt, p.next, p.stats, p.statsAt = true, nextAt, next, st, m.m.Now
	return st, nextAt, next, nil
}
