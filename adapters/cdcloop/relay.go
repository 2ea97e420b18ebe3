package cdcloop

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/outboxcheck/outboxcheck/harness"
)

const (
	// statusEvery is how often the relay tells the server its position
	// even when nothing moved (the server ends a silent one after
	// wal_sender_timeout, 60 s by default).
	statusEvery = time.Second
	// idleFlush is how long the relay waits for more transactions before
	// it publishes those it read, and batchMax how many it reads at most.
	idleFlush = 5 * time.Millisecond
	batchMax  = 16
	// retryStart is the wait before a relay tries the stream again (the
	// slot busy with another relay, the server away).
	retryStart = 100 * time.Millisecond
)

// relay is one incarnation of dispatcher i.
type relay struct {
	s    *Subject
	i    int
	pub  harness.Publisher
	side *pgx.Conn // its ordinary session, for attempts and dead letters
}

// Dispatch runs dispatcher i: it streams from the slot while it can, and
// starts again from the slot's confirmed position when the stream ends.
func (s *Subject) Dispatch(ctx context.Context, i int, pub harness.Publisher) error {
	r := &relay{s: s, i: i, pub: pub}
	defer r.closeSide()
	for ctx.Err() == nil {
		_ = r.stream(ctx) // the slot busy, the link cut, the server crashed: try again
		select {
		case <-ctx.Done():
		case <-time.After(retryStart):
		}
	}
	return nil
}

// txn is one committed transaction's events, and where it ends.
type txn struct {
	events []harness.Message
	end    pglogrepl.LSN
}

// stream reads the slot until the stream or ctx ends.
func (r *relay) stream(ctx context.Context) error {
	conn, slot, start, err := r.connect(ctx)
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		conn.Close(cctx)
	}()
	sctx, cancel := context.WithTimeout(ctx, callTimeout)
	err = pglogrepl.StartReplication(sctx, conn, slot, start, pglogrepl.StartReplicationOptions{
		PluginArgs: []string{"proto_version '1'", "publication_names 'outboxcheck_cdc'"}})
	cancel()
	if err != nil {
		return fmt.Errorf("start replication: %w", err)
	}
	st := &streamState{conn: conn, confirmed: start, rels: map[uint32]*pglogrepl.RelationMessage{},
		keepaliveConfirms: r.s.opts.KeepaliveConfirms, strict: r.s.opts.StrictColumns}
	for {
		if err := st.statusIfDue(ctx); err != nil {
			return err
		}
		deadline := st.nextStatus
		if len(st.ready) > 0 {
			deadline = time.Now().Add(idleFlush)
		}
		rctx, cancel := context.WithDeadline(ctx, deadline)
		raw, err := conn.ReceiveMessage(rctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil && pgconn.Timeout(err):
			if len(st.ready) > 0 {
				if err := r.flush(ctx, st); err != nil {
					return err
				}
			}
			continue
		case err != nil:
			return err
		}
		if err := st.take(raw); err != nil {
			return err
		}
		if len(st.ready) >= batchMax {
			if err := r.flush(ctx, st); err != nil {
				return err
			}
		}
	}
}

// connect opens dispatcher i's replication session through its link, and
// says which slot to stream from and where.
func (r *relay) connect(ctx context.Context) (*pgconn.PgConn, string, pglogrepl.LSN, error) {
	s := r.s
	cfg, err := pgconn.ParseConfig(s.env.ConnString(dispatcherActor(r.i)))
	if err != nil {
		return nil, "", 0, err
	}
	cfg.RuntimeParams["replication"] = "database"
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	conn, err := pgconn.ConnectConfig(cctx, cfg)
	if err != nil {
		return nil, "", 0, err
	}
	slot, start := s.slot, pglogrepl.LSN(0) // 0: from the slot's confirmed position
	switch {
	case s.opts.LateSlot:
		_, err = pglogrepl.CreateReplicationSlot(cctx, conn, slot, "pgoutput", pglogrepl.CreateReplicationSlotOptions{})
		if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == "42710" {
			err = nil // made by an earlier start
		}
	case s.opts.TemporarySlot:
		slot = s.slot + "_t" // one name: while a relay streams from it, the others' creates fail (42710) and they try again
		_, err = pglogrepl.CreateReplicationSlot(cctx, conn, slot, "pgoutput", pglogrepl.CreateReplicationSlotOptions{Temporary: true})
	case s.opts.FromCurrent:
		var sys pglogrepl.IdentifySystemResult
		sys, err = pglogrepl.IdentifySystem(cctx, conn)
		start = sys.XLogPos
	}
	if err != nil {
		conn.Close(cctx)
		return nil, "", 0, err
	}
	return conn, slot, start, nil
}

func dispatcherActor(i int) harness.Actor { return harness.Actor{Role: harness.Dispatcher, N: i} }

// streamState is what one stream has read and confirmed.
type streamState struct {
	conn       *pgconn.PgConn
	confirmed  pglogrepl.LSN // the position told to the server
	nextStatus time.Time
	rels       map[uint32]*pglogrepl.RelationMessage
	open       *txn  // the transaction being read
	ready      []txn // committed, read, not yet published
	// keepaliveConfirms and strict are mutants' bugs (mutants.go).
	keepaliveConfirms, strict bool
}

// statusIfDue tells the server the confirmed position, every statusEvery.
func (st *streamState) statusIfDue(ctx context.Context) error {
	if time.Now().Before(st.nextStatus) {
		return nil
	}
	return st.confirm(ctx, st.confirmed)
}

// confirm tells the server that everything up to lsn is done with: the
// slot may forget it.
func (st *streamState) confirm(ctx context.Context, lsn pglogrepl.LSN) error {
	st.confirmed = max(st.confirmed, lsn)
	st.nextStatus = time.Now().Add(statusEvery)
	return pglogrepl.SendStandbyStatusUpdate(ctx, st.conn, pglogrepl.StandbyStatusUpdate{
		WALWritePosition: st.confirmed, WALFlushPosition: st.confirmed, WALApplyPosition: st.confirmed})
}

// take reads one message of the stream.
func (st *streamState) take(raw pgproto3.BackendMessage) error {
	switch m := raw.(type) {
	case *pgproto3.ErrorResponse:
		return fmt.Errorf("replication: %s (%s)", m.Message, m.Code)
	case *pgproto3.CopyData:
		if len(m.Data) == 0 {
			return nil
		}
		switch m.Data[0] {
		case pglogrepl.PrimaryKeepaliveMessageByteID:
			ka, err := pglogrepl.ParsePrimaryKeepaliveMessage(m.Data[1:])
			if err != nil {
				return err
			}
			if ka.ReplyRequested {
				st.nextStatus = time.Time{} // answered at once, with what is confirmed
			}
			if st.keepaliveConfirms && ka.ServerWALEnd > st.confirmed {
				st.confirmed, st.nextStatus = ka.ServerWALEnd, time.Time{}
			}
		case pglogrepl.XLogDataByteID:
			x, err := pglogrepl.ParseXLogData(m.Data[1:])
			if err != nil {
				return err
			}
			return st.decode(x.WALData)
		}
	}
	return nil
}

// decode reads one pgoutput message: the outbox's inserts, grouped by
// transaction.
func (st *streamState) decode(data []byte) error {
	msg, err := pglogrepl.Parse(data)
	if err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	switch m := msg.(type) {
	case *pglogrepl.RelationMessage:
		st.rels[m.RelationID] = m
	case *pglogrepl.BeginMessage:
		st.open = &txn{}
	case *pglogrepl.InsertMessage:
		rel, ok := st.rels[m.RelationID]
		if !ok {
			return fmt.Errorf("decode: insert into unknown relation %d", m.RelationID)
		}
		if st.open == nil {
			return errors.New("decode: insert outside a transaction")
		}
		ev, err := message(rel, m.Tuple, st.strict)
		if err != nil {
			return err
		}
		st.open.events = append(st.open.events, ev)
	case *pglogrepl.CommitMessage:
		if st.open != nil {
			st.open.end = m.TransactionEndLSN
			st.ready = append(st.ready, *st.open)
			st.open = nil
		}
	}
	return nil
}
