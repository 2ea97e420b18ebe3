// Package sqlfile is the SQL contract (docs/adapters.md): a team's own outbox SQL,
// as named queries in sqlc style, runs in place of the reference's. The
// queries file holds
//
//	-- name: ClaimOutboxEvents :many        sqlc.arg(now), sqlc.arg(batch_limit), sqlc.arg(claim_id), sqlc.arg(claim_expires_at)
//	-- name: GetNextOutboxAttemptAt :one    (no parameters)
//	-- name: MarkOutboxEventPublished :execrows   sqlc.arg(id), sqlc.arg(claim_id), sqlc.arg(published_at)
//	-- name: MarkOutboxEventFailed :execrows      sqlc.arg(id), sqlc.arg(claim_id), sqlc.arg(status), sqlc.arg(available_at), sqlc.arg(last_error)
//
// exactly as the seed's runtime.sql has them; other named queries are
// ignored. The claim must return id, aggregate_id, event_type, sequence,
// payload, created_at, attempts, claim_id in that order. An optional
// schema file runs before the reference's own schema, so the team's
// outbox_events (with the seed's columns) and indexes are the ones used.
// Everything else (producer, consumer, operator queries) is the reference's.
package sqlfile

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/outboxcheck/outboxcheck/adapters/reference"
	"github.com/outboxcheck/outboxcheck/impl"
	"github.com/outboxcheck/outboxcheck/impl/mutants"
	"github.com/outboxcheck/outboxcheck/stepcheck"
)

// Query is one named query of a file.
type Query struct {
	Name, Kind string
	SQL        string
	Line       int // where its "-- name:" header is
}

// required says, per query the harness needs, its kind and its parameters
// in the order impl.Queries takes them ($1, $2, ...).
var required = []struct {
	name, kind string
	params     []string
	set        func(q *impl.Queries, sql string)
}{
	{"ClaimOutboxEvents", ":many", []string{"now", "batch_limit", "claim_id", "claim_expires_at"}, func(q *impl.Queries, s string) { q.Claim = s }},
	{"GetNextOutboxAttemptAt", ":one", nil, func(q *impl.Queries, s string) { q.NextAttemptAt = s }},
	{"MarkOutboxEventPublished", ":execrows", []string{"id", "claim_id", "published_at"}, func(q *impl.Queries, s string) { q.MarkPublished = s }},
	{"MarkOutboxEventFailed", ":execrows", []string{"id", "claim_id", "status", "available_at", "last_error"}, func(q *impl.Queries, s string) { q.MarkFailed = s }},
}

var (
	header = regexp.MustCompile(`^--\s*name:\s*(\S+)\s+(:\S+)\s*$`)
	arg    = regexp.MustCompile(`sqlc\.n?arg\(\s*'?([A-Za-z_][A-Za-z0-9_]*)'?\s*\)|@([A-Za-z_][A-Za-z0-9_]*)`)
	kinds  = []string{":one", ":many", ":exec", ":execrows", ":execresult", ":batchexec", ":batchmany", ":batchone", ":copyfrom"}
)

// Parse reads the named queries of src; file names the source in errors.
func Parse(file string, src []byte) (map[string]Query, error) {
	out := map[string]Query{}
	var cur *Query
	var body strings.Builder
	flush := func() error {
		if cur == nil {
			return nil
		}
		cur.SQL = strings.TrimSuffix(strings.TrimSpace(body.String()), ";")
		if strings.TrimSpace(cur.SQL) == "" {
			return fmt.Errorf("%s:%d: query %s has no SQL", file, cur.Line, cur.Name)
		}
		out[cur.Name] = *cur
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "--") && strings.Contains(trimmed, "name:") {
			m := header.FindStringSubmatch(trimmed)
			if m == nil {
				return nil, fmt.Errorf("%s:%d: malformed query header %q (want \"-- name: Name :kind\")", file, n, trimmed)
			}
			if !slices.Contains(kinds, m[2]) {
				return nil, fmt.Errorf("%s:%d: query %s has unknown kind %s", file, n, m[1], m[2])
			}
			if _, dup := out[m[1]]; dup || (cur != nil && cur.Name == m[1]) {
				return nil, fmt.Errorf("%s:%d: query %s defined twice", file, n, m[1])
			}
			if err := flush(); err != nil {
				return nil, err
			}
			cur, body = &Query{Name: m[1], Kind: m[2], Line: n}, strings.Builder{}
			continue
		}
		if cur == nil {
			if trimmed != "" && !strings.HasPrefix(trimmed, "--") {
				return nil, fmt.Errorf("%s:%d: SQL before the first \"-- name:\" header", file, n)
			}
			continue
		}
		body.WriteString(line + "\n")
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}

// Queries maps a file's named queries onto the store's, rewriting each
// sqlc.arg(name) to its positional parameter.
func Queries(file string, src []byte) (impl.Queries, error) {
	qs, err := Parse(file, src)
	if err != nil {
		return impl.Queries{}, err
	}
	out := impl.DefaultQueries()
	for _, r := range required {
		q, ok := qs[r.name]
		if !ok {
			return impl.Queries{}, fmt.Errorf("%s: required query %s is missing", file, r.name)
		}
		if q.Kind != r.kind {
			return impl.Queries{}, fmt.Errorf("%s:%d: query %s is %s, want %s", file, q.Line, r.name, q.Kind, r.kind)
		}
		var bad string
		used := make([]bool, len(r.params))
		sql := arg.ReplaceAllStringFunc(q.SQL, func(m string) string {
			sm := arg.FindStringSubmatch(m)
			name := sm[1] + sm[2]
			i := slices.Index(r.params, name)
			if i < 0 {
				bad = name
				return m
			}
			used[i] = true
			return fmt.Sprintf("$%d", i+1)
		})
		if bad != "" {
			return impl.Queries{}, fmt.Errorf("%s:%d: query %s takes an unknown parameter %q (it may use %s)", file, q.Line, r.name, bad, strings.Join(r.params, ", "))
		}
		r.set(&out, typeUnused(sql, r.params, used))
	}
	return out, nil
}

// New builds the subject from a queries file and an optional schema file.
// A server error of one of the team's queries at run time is a
// *QueryError, which names the file, the line and the query.
func New(queriesFile, schemaFile string) (stepcheck.NewSubject, error) {
	src, err := os.ReadFile(queriesFile)
	if err != nil {
		return nil, err
	}
	queries, err := Queries(queriesFile, src)
	if err != nil {
		return nil, err
	}
	parsed, err := Parse(queriesFile, src)
	if err != nil {
		return nil, err
	}
	var schema string
	if schemaFile != "" {
		b, err := os.ReadFile(schemaFile)
		if err != nil {
			return nil, err
		}
		schema = string(b)
	}
	m := mutants.Mutant{Name: "sql:" + queriesFile, Queries: func(q *impl.Queries) { *q = queries }, Schema: schema}
	return func(ctx context.Context, env stepcheck.Env) (stepcheck.Subject, error) {
		s, err := reference.Build(ctx, env, m)
		if s == nil {
			return nil, err
		}
		return &named{Subject: s, file: queriesFile, queries: parsed, sql: storeSQL(queries)}, err
	}, nil
}

// storeSQL is the team's required queries by name, as the store runs
// them (parameters rewritten).
func storeSQL(q impl.Queries) map[string]string {
	return map[string]string{"ClaimOutboxEvents": q.Claim, "GetNextOutboxAttemptAt": q.NextAttemptAt,
		"MarkOutboxEventPublished": q.MarkPublished, "MarkOutboxEventFailed": q.MarkFailed}
}

// paramTypes are the SQL types of the parameters the store passes.
var paramTypes = map[string]string{
	"now": "timestamptz", "batch_limit": "integer", "claim_id": "text", "claim_expires_at": "timestamptz",
	"id": "text", "published_at": "timestamptz", "status": "text", "available_at": "timestamptz", "last_error": "text",
}

var leadingWith = regexp.MustCompile(`(?i)^\s*WITH\s+`)

// typeUnused declares the parameters a query leaves out (the store passes
// every one, and PostgreSQL refuses a parameter it cannot type) in a CTE
// the query never reads.
func typeUnused(sql string, params []string, used []bool) string {
	var cols []string
	for i, p := range params {
		if !used[i] {
			cols = append(cols, fmt.Sprintf("$%d::%s", i+1, paramTypes[p]))
		}
	}
	if len(cols) == 0 {
		return sql
	}
	cte := "outboxcheck_unused_params AS (SELECT " + strings.Join(cols, ", ") + ")"
	if loc := leadingWith.FindStringIndex(sql); loc != nil {
		return "WITH " + cte + ", " + sql[loc[1]:]
	}
	return "WITH " + cte + "\n" + sql
}
