package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/outboxcheck/outboxcheck/internal/pgprov"
)

// cleanCmd lists the tool's databases on a server, left by runs that did
// not drop them (SIGKILL, a lost connection), and drops them.
func cleanCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("clean", "Lists the databases outboxcheck runs left on a PostgreSQL server (outboxcheck_<hex>, marked as\nthe tool's) and drops them. A run whose process is alive on this host is left alone.", stderr)
	url := fs.String("database-url", "", "PostgreSQL server URL (default: $OUTBOXCHECK_DATABASE_URL)")
	dry := fs.Bool("dry-run", false, "list them only")
	all := fs.Bool("all", false, "drop them even if their run may still be running (another host, or an older version's mark)")
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	if *url == "" && os.Getenv(pgprov.EnvDatabaseURL) == "" {
		return usageErrorf("clean needs --database-url or %s: a server the tool starts itself holds nothing to clean", pgprov.EnvDatabaseURL)
	}
	ses, err := openSession(*url, stderr, false)
	if err != nil {
		return err
	}
	defer ses.close()
	if ses.cluster.Source != pgprov.SourceURL {
		return usageErrorf("clean needs --database-url or OUTBOXCHECK_DATABASE_URL: a server the tool starts itself holds nothing to clean")
	}
	ctx, cancel := context.WithTimeout(ses.ctx, 5*time.Minute)
	defer cancel()
	left, err := ses.cluster.Leftovers(ctx)
	if err != nil {
		return infraError(err)
	}
	dropped := 0
	for _, l := range left {
		switch {
		case *dry:
			fmt.Fprintf(stdout, "%s\n", l)
		case !l.Gone && !*all:
			fmt.Fprintf(stdout, "kept %s: its run may still be running (--all drops it)\n", l)
		default:
			if err := ses.cluster.DropLeftover(ctx, l); err != nil {
				return infraError(err)
			}
			dropped++
			fmt.Fprintf(stdout, "dropped %s\n", l)
		}
	}
	fmt.Fprintf(stdout, "outboxcheck: %d databases of outboxcheck's found, %d dropped\n", len(left), dropped)
	return nil
}
