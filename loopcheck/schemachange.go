package loopcheck

import (
	"context"
	"fmt"
)

// SchemaChanger is a Subject whose outbox table can change shape while
// its relays run, as a migration does: ChangeSchema makes the n-th change
// of a schedule (from 1), adding a column to the outbox table, say. A
// relay that reads rows by position, or that decodes a change stream
// against the columns it knew at its start, breaks on it; Reset must
// undo the changes. Only a SchemaChanger draws schema-change steps.
type SchemaChanger interface {
	ChangeSchema(ctx context.Context, n int) error
}

// schemaChange changes the subject's outbox table now, within a call
// timeout (a held transaction may keep the change waiting for its lock:
// then it does not happen, and the story says so).
func (c *check) schemaChange() {
	sc, ok := capability[SchemaChanger](c.subj)
	if !ok {
		c.tally.injected("schema-change", "outbox table", false, 0)
		c.record("SchemaChange", "operator", "", "skipped: the subject's outbox table does not change (not a SchemaChanger)")
		return
	}
	c.schemaChanges++
	n := c.schemaChanges
	err := c.call(func(ctx context.Context) error { return sc.ChangeSchema(ctx, n) })
	c.tally.injected("schema-change", "outbox table", err == nil, 0)
	if err != nil {
		c.record("SchemaChange", "operator", fmt.Sprintf("change %d", n), "not made: "+err.Error())
		return
	}
	c.record("SchemaChange", "operator", fmt.Sprintf("change %d", n), "the outbox table changed shape while the relays ran")
}
