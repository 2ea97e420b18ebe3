package cdcloop

import (
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/outboxcheck/outboxcheck/harness"
)

var types = pgtype.NewMap()

// known are the outbox table's columns as impl's schema makes them.
var known = map[string]bool{"id": true, "aggregate_id": true, "event_type": true, "sequence": true, "payload": true,
	"status": true, "attempts": true, "claim_id": true, "claim_expires_at": true, "available_at": true,
	"created_at": true, "published_at": true, "last_error": true}

// message is the event an outbox insert carries, its columns read by
// name: a column added later is ignored, unless strict (a mutant's).
func message(rel *pglogrepl.RelationMessage, tuple *pglogrepl.TupleData, strict bool) (harness.Message, error) {
	var m harness.Message
	if tuple == nil {
		return m, fmt.Errorf("decode: insert into %s without a row", rel.RelationName)
	}
	for _, c := range rel.Columns {
		if strict && !known[c.Name] {
			return m, fmt.Errorf("decode %s: unexpected column %s", rel.RelationName, c.Name)
		}
	}
	for i, col := range tuple.Columns {
		if i >= len(rel.Columns) || col.DataType != 't' {
			continue
		}
		c := rel.Columns[i]
		var err error
		switch c.Name {
		case "id":
			m.ID = string(col.Data)
		case "aggregate_id":
			m.AggregateID = string(col.Data)
		case "event_type":
			m.Type = string(col.Data)
		case "sequence":
			err = types.Scan(c.DataType, pgtype.TextFormatCode, col.Data, &m.Sequence)
		case "payload":
			m.Payload = append([]byte(nil), col.Data...)
		case "created_at":
			var t time.Time
			err = types.Scan(c.DataType, pgtype.TextFormatCode, col.Data, &t)
			m.OccurredAt = t
		}
		if err != nil {
			return m, fmt.Errorf("decode %s.%s: %w", rel.RelationName, c.Name, err)
		}
	}
	if m.ID == "" || m.AggregateID == "" {
		return m, fmt.Errorf("decode: an insert into %s without id or aggregate_id", rel.RelationName)
	}
	return m, nil
}
