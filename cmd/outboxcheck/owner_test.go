package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// isolateOwnerKey gives the rest of t, and the runs it starts, an owner
// key of their own in a temp dir: the user's own key is never read or
// written.
func isolateOwnerKey(t *testing.T) {
	t.Setenv(pgscratch.EnvCacheDir, "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
}

// newDatabaseAndDie is a run of the tool that creates its database on
// url, prints its name, and (once stdin closes) exits without dropping
// it, as a killed run would.
func newDatabaseAndDie(url string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pgscratch.Start(ctx, pgscratch.Options{DatabaseURL: url, OwnSignals: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	db, err := c.NewDatabase(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	fmt.Println(db.Name)
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// toolRun starts a run of the tool (in this process's environment, plus
// env) that makes a database on url; it returns the database's name and
// a func that ends the run, leaving the database behind.
func toolRun(t *testing.T, url string, env ...string) (name string, die func()) {
	t.Helper()
	child := exec.Command(os.Args[0])
	child.Env = append(append(os.Environ(), "OUTBOXCHECK_TEST_NEWDB="+url), env...)
	child.Stderr = os.Stderr
	in, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	die = sync.OnceFunc(func() { in.Close(); child.Wait() })
	t.Cleanup(die)
	line, _ := bufio.NewReader(out).ReadString('\n')
	if name = strings.TrimSpace(line); !strings.HasPrefix(name, "outboxcheck_") {
		t.Fatalf("the tool's run made no database: %q", name)
	}
	return name, die
}

// deadToolRun is toolRun's database, its run gone.
func deadToolRun(t *testing.T, url string, env ...string) string {
	name, die := toolRun(t, url, env...)
	die()
	return name
}

// A database whose marker was copied from a real one of the tool's, forged
// with an all-zero token, or signed with another key; one with the
// tool's prefix and no marker; one the tool made whose owner is now
// another role; one with the marker and another name: each looks like a
// dead run's, yet survives run --database-url (its sweep), clean and clean
// --all, each left with its reason. Databases dead runs of the tool made
// are swept and cleaned; a live run's, only by clean --all.
func TestForgedMarkersSurviveRunAndClean(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	server, err := pgscratch.Start(ctx, pgscratch.Options{NoDocker: true})
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	url := server.URL()
	isolateOwnerKey(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	sql := func(q string) {
		t.Helper()
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	real := deadToolRun(t, url)
	var mark string
	if err := conn.QueryRow(ctx, "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1", real).Scan(&mark); err != nil {
		t.Fatal(err)
	}
	survivors := map[string]string{} // name → why it is left
	forge := func(name, comment, why string) {
		sql("CREATE DATABASE " + name)
		if comment != "" {
			sql("COMMENT ON DATABASE " + name + " IS '" + comment + "'")
		}
		survivors[name] = why
	}
	const badToken = "its marker's token does not verify"
	forge("outboxcheck_0000000000c0b1ed", mark, badToken)
	forge("outboxcheck_0000000000000000", regexp.MustCompile(`token=\S*`).ReplaceAllString(mark, "token="+strings.Repeat("0", 64)), badToken)
	forge("outboxcheck_00000000000000aa", "", "it carries no outboxcheck marker")
	forge("users_own", mark, "name lacks the tool's prefix")
	sql("CREATE DATABASE users_unmarked")
	survivors[deadToolRun(t, url, "XDG_CACHE_HOME="+t.TempDir())] = badToken // another user's key
	roled := deadToolRun(t, url)
	sql("CREATE ROLE outboxcheck_other")
	sql("ALTER DATABASE " + roled + " OWNER TO outboxcheck_other")
	survivors[roled] = "owned by role outboxcheck_other"

	code, _, stderr := cliErr(t, "run", "--database-url", url, "--no-faults", "--checks", "1", "--report-dir", "")
	if code != exitOK || !strings.Contains(stderr, "dropped database "+real+" ") {
		t.Errorf("run: exit %d; want it to drop %s, a dead run's", code, real)
	}
	for name, why := range survivors {
		if !strings.Contains(stderr, "left database "+name+": "+why) {
			t.Errorf("run does not say it left %s: %s", name, why)
		}
	}

	again := deadToolRun(t, url)
	live, die := toolRun(t, url)
	defer die()
	code, stdout, _ := cliErr(t, "clean", "--database-url", url, "--dry-run")
	if code != exitOK || !strings.Contains(stdout, "would drop "+again+" ") || !strings.Contains(stdout, "left "+live+": its run") {
		t.Errorf("clean --dry-run: exit %d; want it to name %s to drop, %s to leave", code, again, live)
	}
	for _, args := range [][]string{{"clean"}, {"clean", "--all"}} {
		code, stdout, _ = cliErr(t, append(args, "--database-url", url)...)
		if code != exitOK {
			t.Errorf("%v: exit %d", args, code)
		}
		for name, why := range survivors {
			if !strings.Contains(stdout, "left "+name+": "+why) {
				t.Errorf("%v does not say it left %s: %s", args, name, why)
			}
		}
	}
	if strings.Contains(stdout, "users_unmarked") {
		t.Errorf("clean lists users_unmarked, which has neither the tool's name nor its mark")
	}

	rows, _ := conn.Query(ctx, "SELECT datname FROM pg_database")
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	for name := range survivors {
		if !slices.Contains(names, name) {
			t.Errorf("%s was dropped", name)
		}
	}
	for _, name := range []string{real, again, live} {
		if slices.Contains(names, name) {
			t.Errorf("%s, the tool's, survived", name)
		}
	}
}
