package gate

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// Clean lists the tool's databases on the server at url (or
// $OUTBOXCHECK_DATABASE_URL), left by runs that did not drop them
// (SIGKILL, a lost connection), and drops them. It drops only databases
// whose marker verifies as the tool's (pgscratch.Leftover), and says, one
// line each, what it left and why. With dry it drops nothing; with all it
// also drops those whose run may still be running.
func Clean(url string, dry, all bool, stdout, stderr io.Writer) error {
	if url == "" && os.Getenv(pgscratch.EnvDatabaseURL) == "" {
		return Usagef("clean needs --database-url or %s: a server the tool starts itself holds nothing to clean", pgscratch.EnvDatabaseURL)
	}
	ses, err := openSession(url, stderr, false, nil)
	if err != nil {
		return err
	}
	defer ses.close()
	if ses.cluster.Source != pgscratch.SourceURL {
		return Usagef("clean needs --database-url or OUTBOXCHECK_DATABASE_URL: a server the tool starts itself holds nothing to clean")
	}
	if err := pgscratch.EnsureOwnerKey(); err != nil {
		fmt.Fprintf(stderr, "outboxcheck: warning: %s: no database can be verified as the tool's, none is dropped\n", OneLine(err.Error()))
	}
	ctx, cancel := context.WithTimeout(ses.ctx, 5*time.Minute)
	defer cancel()
	found, err := ses.cluster.Leftovers(ctx)
	if err != nil {
		return infraError(err)
	}
	return clean(ctx, ses.cluster, found, dry, all, stdout)
}

// clean drops the databases found that are the tool's and whose run is
// gone (with all, also those that may still be running), says what it
// left and why, one line each, and sums up. With dry it drops nothing and
// says what it would drop.
func clean(ctx context.Context, c *pgscratch.Server, found []pgscratch.Leftover, dry, all bool, w io.Writer) error {
	act, verb := "dropped", "dropped"
	if dry {
		act, verb = "would drop", "would be dropped"
	}
	var ours, dropped int
	for _, l := range found {
		if l.Ours() {
			ours++
		}
		if !l.Ours() || !l.Gone && !all {
			fmt.Fprintf(w, "left %s: %s%s\n", l.Name, leftWhy(l), allDrops(l, all))
			continue
		}
		if !dry {
			if err := c.DropLeftover(ctx, l); err != nil {
				return infraError(err)
			}
		}
		dropped++
		fmt.Fprintf(w, "%s %s\n", act, l)
	}
	fmt.Fprintf(w, "outboxcheck: databases of outboxcheck's: %d found, %d %s; %d others left, not provably its\n", ours, dropped, verb, len(found)-ours)
	return nil
}

// allDrops notes that --all would drop a database of the tool's that
// clean leaves because its run may still be running.
func allDrops(l pgscratch.Leftover, all bool) string {
	if l.Ours() && !all {
		return " (--all drops it)"
	}
	return ""
}
