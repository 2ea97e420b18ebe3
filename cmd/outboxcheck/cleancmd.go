package main

import (
	"io"

	"github.com/outboxcheck/outboxcheck/gate"
)

// cleanCmd is `outboxcheck clean`: gate.Clean.
func cleanCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("clean", "Drops the databases outboxcheck runs left on a PostgreSQL server: named outboxcheck_<hex>, owned by\nthe role you connect as, and marked with a token signed by this OS user's owner key. A run whose\nprocess is alive on this host is left alone; so is every database that is not provably the tool's,\nwith the reason.", stdout)
	url := fs.String("database-url", "", "PostgreSQL server URL (default: $OUTBOXCHECK_DATABASE_URL)")
	dry := fs.Bool("dry-run", false, "list what would be dropped and what would be left, drop nothing")
	all := fs.Bool("all", false, "also drop the tool's databases whose run may still be running (another host or pid namespace)")
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	return gate.Clean(*url, *dry, *all, stdout, stderr)
}
