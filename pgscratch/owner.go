package pgscratch

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A database the tool creates carries, as its comment, the owner mark,
// who made it (host, pid namespace, pid, start time) and a token: an
// HMAC under this OS user's owner key (ownerkey.go) over the server, the
// database's name and OID, and the rest of the comment (claim.go). Who
// made it is informative only, for telling a run that is provably gone
// (same host and pid namespace, pid dead); the token is the proof.

// owner is what a database's comment says about the run that made it.
type owner struct {
	Host    string
	PIDNS   string // the pid namespace the pid is in (containers share hostnames)
	PID     int
	Started time.Time
	Token   string
}

// body is the comment without its token: what the token covers.
func (o owner) body() string {
	return fmt.Sprintf("%s; host=%s pidns=%s pid=%d started=%s", ownerMark, o.Host, o.PIDNS, o.PID, o.Started.UTC().Format(time.RFC3339))
}

func (o owner) comment() string { return o.body() + " token=" + o.Token }

// parseOwner reads a comment; ok is false unless it starts with the mark.
// body is the comment up to its last " token=" (all of it if none).
func parseOwner(comment string) (o owner, body string, ok bool) {
	if !strings.HasPrefix(comment, ownerMark) {
		return owner{}, "", false
	}
	body = comment
	if i := strings.LastIndex(comment, " token="); i >= 0 {
		body, o.Token = comment[:i], comment[i+len(" token="):]
	}
	for _, f := range strings.Fields(strings.TrimPrefix(body[len(ownerMark):], ";")) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "host":
			o.Host = v
		case "pidns":
			o.PIDNS = v
		case "pid":
			o.PID, _ = strconv.Atoi(v)
		case "started":
			o.Started, _ = time.Parse(time.RFC3339, v)
		}
	}
	return o, body, true
}

// thisRun is the owner of the databases this process creates.
var thisRun = sync.OnceValue(func() owner {
	host, _ := os.Hostname()
	return owner{Host: host, PIDNS: pidNamespace(), PID: os.Getpid(), Started: time.Now()}
})

// pidNamespace names this process's pid namespace ("" if unknown): a pid
// is only evidence within it.
func pidNamespace() string {
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	return strings.Trim(strings.TrimPrefix(ns, "pid:"), "[]")
}

// gone reports whether o's run has provably ended: it ran on this host,
// in this pid namespace (two containers may share a hostname, not pids),
// and its process is dead. Anything else (another host or namespace, an
// unmarked owner, a live pid) may still be running. It says nothing about
// whether the database is the tool's: only a verified token does.
func (o owner) gone() bool {
	host, _ := os.Hostname()
	ns := pidNamespace()
	return o.Host != "" && o.Host == host && ns != "" && o.PIDNS == ns && o.PID > 0 && !alive(o.PID)
}
