package gate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/outboxcheck/outboxcheck/adapters/sqlfile"
	"github.com/outboxcheck/outboxcheck/reports"
)

// The copies of the SQL contract's files in a report directory.
const (
	queriesCopy = "queries.sql"
	schemaCopy  = "schema.sql"
)

// preflight prepares the team's queries against its schema in a scratch
// database before the first check: their mistakes are exit 2, with file,
// line and query.
func preflight(ses *session, queries, schema string) error {
	ctx, cancel := context.WithTimeout(ses.ctx, time.Minute)
	defer cancel()
	db, err := ses.cluster.NewDatabase(ctx)
	if err != nil {
		return infraError(err)
	}
	defer db.Drop(context.Background())
	err = sqlfile.Preflight(ctx, db.URL, queries, schema)
	var ce *sqlfile.ConfigError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		return Usagef("%v", ce)
	case ses.interrupted() != nil:
		return ses.interrupted()
	}
	return infraError(err)
}

// copySQL puts copies of the SQL contract's files in the report directory
// and points the report at them: replay runs what the run ran, wherever
// the user's files have gone since.
func copySQL(dir string, rep *reports.Report) error {
	if dir == "" || rep.SQLQueries == "" {
		return nil
	}
	rep.SQLFrom = nil
	for _, f := range []struct {
		path *string
		name string
	}{{&rep.SQLQueries, queriesCopy}, {&rep.SQLSchema, schemaCopy}} {
		if *f.path == "" {
			continue
		}
		b, err := os.ReadFile(*f.path)
		if err != nil {
			return Usagef("copy %s into the report: %v", *f.path, err)
		}
		if err := reports.WriteFile(filepath.Join(dir, f.name), b); err != nil {
			return Usagef("copy %s into the report: %v", *f.path, err)
		}
		rep.SQLFrom = append(rep.SQLFrom, *f.path)
		*f.path = f.name
	}
	return nil
}

// reportSQL resolves a report's SQL file for replay: a copy inside the
// report directory, or (older reports) the user's own path.
func reportSQL(dir, path string) string {
	if path == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}
