package cdcloop

import (
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/outboxcheck/outboxcheck/harness"
)

var types = pgtype.NewMap()

// message is the event an outbox insert carries, its columns read by
// name (a column added later is ignored).
func message(rel *pglogrepl.RelationMessage, tuple *pglogrepl.TupleData) (harness.Message, error) {
	var m harness.Message
	if tuple == nil {
		return m, fmt.Errorf("decode: insert into %s without a row", rel.RelationName)
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
