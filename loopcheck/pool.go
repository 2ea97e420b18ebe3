package loopcheck

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"sync"
	"time"

	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/pgscratch"
)

// pool is the runners of one run: each with its own database, links,
// broker and subject instance, all counting into one tally, so that
// several schedules run at once. A loop schedule mostly waits (for
// leases, backoff, recovery), so more runners than cores pay.
type pool struct {
	runners []*runner
	// server is the run's server, for the other runners' databases:
	// closing it drops them.
	server *pgscratch.Server
	// note says why the pool has fewer runners than asked, if it has.
	note string
	mu   sync.Mutex // one Options.OnCheck call at a time
}

// DefaultParallel is how many schedules to run at once for a subject
// that does not read the server-wide snapshot (see Options.Parallel): two
// per core, at most 4. A loop schedule mostly waits, so more runners than
// cores pay.
func DefaultParallel() int { return min(2*runtime.NumCPU(), 4) }

// openPool opens opts.Parallel runners: the first on opts.DatabaseURL,
// the others each on a fresh database of the same server (made, marked
// and dropped as pgscratch does). A server that will not make them
// leaves the pool smaller, with a note, not failed.
func openPool(newSubject NewSubject, opts Options) (*pool, error) {
	t := &tally{}
	r0, err := open(newSubject, opts, t)
	if err != nil {
		return nil, err
	}
	p := &pool{runners: []*runner{r0}}
	if opts.Parallel <= 1 {
		return p, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if p.server, err = pgscratch.Start(ctx, pgscratch.Options{DatabaseURL: opts.DatabaseURL, OwnSignals: true}); err != nil {
		p.note = fmt.Sprintf("1 schedule at a time, not %d: %v", opts.Parallel, err)
		return p, nil
	}
	for len(p.runners) < opts.Parallel {
		db, err := p.server.NewDatabase(ctx)
		if err != nil {
			p.note = fmt.Sprintf("%d schedules at a time, not %d: %v", len(p.runners), opts.Parallel, err)
			break
		}
		o := opts
		o.DatabaseURL = db.URL
		r, err := open(newSubject, o, t)
		if err != nil {
			p.close()
			return nil, err
		}
		p.runners = append(p.runners, r)
	}
	r0.peers = p.runners[1:]
	return p, nil
}

func (p *pool) close() {
	for _, r := range p.runners {
		r.close()
	}
	if p.server != nil {
		p.server.Close()
	}
}

// network is the run's network coverage: every runner's links.
func (r *runner) network() faults.Coverage {
	c := r.net.Coverage()
	for _, o := range r.peers {
		c.Merge(o.net.Coverage())
	}
	return c
}

// linkCoverage is the run's coverage per link, every runner's links of a
// name together.
func (r *runner) linkCoverage() map[string]faults.Coverage {
	out := r.net.LinkCoverage()
	if r.js != nil {
		maps.Copy(out, r.js.Net.LinkCoverage())
	}
	for _, o := range r.peers {
		other := o.net.LinkCoverage()
		if o.js != nil {
			maps.Copy(other, o.js.Net.LinkCoverage())
		}
		for l, c := range other {
			if out[l] == nil {
				out[l] = faults.Coverage{}
			}
			out[l].Merge(c)
		}
	}
	return out
}
