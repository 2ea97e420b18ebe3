package model

import (
	"fmt"
	"time"
)

// Semantics is what a subject declares about how its outbox behaves: its
// numbers (lease, attempts, backoff) and the rules on which correct
// outboxes differ from the seed's (docs/adapters.md). The model judges every
// result by it. The zero value of each rule is the seed's, and
// SeedSemantics is the seed's whole: an outbox whose semantics differ
// without being wrong declares the difference instead of being rejected.
type Semantics struct {
	// Lease is how long a claim holds a row.
	Lease time.Duration
	// MaxAttempts is the attempt count at which a failure ends the row
	// (Dead) instead of retrying it.
	MaxAttempts int
	// BackoffBase and BackoffCap give the seed's backoff after a failure
	// that leaves a row at k attempts: BackoffBase × 2^min(k, BackoffCap).
	BackoffBase time.Duration
	BackoffCap  int
	// Backoff, if set, replaces the seed's formula: after a failure that
	// leaves a row at k attempts it comes due again no sooner than lo and
	// no later than hi after the failure (lo == hi where it is exact;
	// jitter and a cap are the subject's to fold in). The model accepts
	// any available_at in the window and adopts the one it reads back.
	Backoff func(attempts int) (lo, hi time.Duration)
	// AttemptsOnFailure: attempts count failures (the failure update, or
	// a rescue that counts, adds one), not claims (the seed: each claim
	// adds one, so the first failure backs off 2^1).
	AttemptsOnFailure bool
	// Rescue, if set, is what becomes of an expired lease: it is not
	// claimable (the seed's claim query takes it back at once); a
	// rescuer, the Rescue action, re-queues it and revokes its claim.
	Rescue *RescueRule
	// Strict: a row comes due, a lease expires and a PUBLISHED row passes
	// its retention only once the instant is strictly past (available_at <
	// now), not when it is reached (<=, the seed). It makes every edge
	// strict; StrictDue, StrictExpiry and StrictRetention make one each,
	// for a subject that compares differently at different edges (a fetch
	// that takes a job once scheduled_at <= now beside a rescuer and a
	// cleaner that act only once lease_until < now, finalized_at <
	// cutoff: StrictExpiry and StrictRetention).
	Strict bool
	// StrictDue: a PENDING or FAILED row is due only once available_at <
	// now.
	StrictDue bool
	// StrictExpiry: a lease is over (for the claim query that takes it
	// back, or for the rescuer) only once claim_expires_at < now.
	StrictExpiry bool
	// StrictRetention: cleanup may delete a PUBLISHED row only once
	// published_at < now - retention.
	StrictRetention bool
	// DeadKeepsAvailableAt: a failure that ends a row (Dead) leaves its
	// available_at as it was; the seed sets it to now + backoff, as for a
	// retry.
	DeadKeepsAvailableAt bool
	// Redrive is what the operator's redrive does.
	Redrive RedriveRule
	// DeleteOnSuccess: a successful mark deletes the row instead of
	// setting it PUBLISHED (a job queue that removes a finished job).
	// A deleted row must have been delivered, as one cleanup removed:
	// no-loss reads the broker and the effects for it, not a row. A row
	// deleted inside Publish once the broker has the message is allowed,
	// as a mark inside Publish is.
	DeleteOnSuccess bool
	// LockHeld: a claim is the row lock of the claimant's open transaction,
	// not a lease written on the row. It has no expiry; what the claim
	// writes is seen by others only when its mark commits; it ends when
	// its mark commits or its session ends (a crash, a lost connection),
	// and then the row is as it was before the claim. Lease is then only
	// a step of the harness's clock. It excludes Rescue.
	LockHeld bool
	// Names spells a status as the subject stores it, where that differs
	// from the seed's (Dead: "discarded", say). Read-back rows are parsed
	// with it and problems use it.
	Names map[Status]string
	// Without lists the optional operations the subject does not have:
	// the harness never calls them, and what only they could show is
	// reported not applicable (never passed).
	Without []Operation
}

// RescueRule is a rescuer's pass: every PUBLISHING row whose lease has
// expired becomes FAILED (Dead at its attempt limit) with its claim
// revoked, due again at now + Delay, or after the declared backoff.
type RescueRule struct {
	Delay time.Duration
	// UseBackoff: due again after the backoff for its attempts, as after
	// a failure, instead of Delay.
	UseBackoff bool
	// CountsAttempt: with AttemptsOnFailure, a rescue counts as a failed
	// attempt (attempts + 1). With attempts counted on claim, the claim
	// already counted it.
	CountsAttempt bool
}

// RedriveRule says which rows a redrive takes and what it does to their
// attempts. The seed's (the zero value): DEAD rows only, attempts reset.
type RedriveRule struct {
	// AnyIdle: any row not held by a live claim (PENDING, FAILED, DEAD or
	// PUBLISHED) is made due now, not only DEAD ones.
	AnyIdle bool
	// OneMore: attempts are kept and a row at its limit is granted one
	// more attempt, instead of attempts reset to 0.
	OneMore bool
	// AsFailed: a redriven row is left as a failed one is (FAILED, due
	// now), not PENDING: a queue whose redrive looks like a retry. Read
	// back, it is indistinguishable from a row a failure left due now,
	// and the model expects exactly that.
	AsFailed bool
}

// Operation names an optional operation of the step contract.
type Operation string

const (
	OpRedrive       Operation = "Redrive"
	OpCleanup       Operation = "Cleanup"
	OpStats         Operation = "Stats"
	OpNextAttemptAt Operation = "NextAttemptAt"
)

// SeedSemantics is the seed's: a 1 minute lease, DEAD at 20 attempts,
// 2^min(attempts,10) s backoff, attempts counted on claim, expired leases
// reclaimable in the claim query, <= edges, redrive of DEAD rows that
// resets attempts.
func SeedSemantics() Semantics {
	return Semantics{Lease: time.Minute, MaxAttempts: 20, BackoffBase: time.Second, BackoffCap: 10}
}

// Has reports whether the subject has operation op.
func (s Semantics) Has(op Operation) bool {
	for _, w := range s.Without {
		if w == op {
			return false
		}
	}
	return true
}

// BackoffRange is the window in which a row left at attempts by a
// failure comes due again, measured from the failure.
func (s Semantics) BackoffRange(attempts int) (lo, hi time.Duration) {
	if s.Backoff != nil {
		return s.Backoff(attempts)
	}
	d := s.BackoffBase * time.Duration(int64(1)<<min(max(attempts, 0), s.BackoffCap))
	return d, d
}

// Edge is an instant the model compares with now, each declared strict
// (<) or not (<=) on its own.
type Edge int

const (
	DueEdge       Edge = iota // available_at: a PENDING or FAILED row comes due
	ExpiryEdge                // claim_expires_at: a lease is over
	RetentionEdge             // published_at + retention: cleanup may delete
)

// StrictAt reports whether edge e is strict: reached only once the
// instant is past.
func (s Semantics) StrictAt(e Edge) bool {
	switch e {
	case DueEdge:
		return s.Strict || s.StrictDue
	case ExpiryEdge:
		return s.Strict || s.StrictExpiry
	case RetentionEdge:
		return s.Strict || s.StrictRetention
	}
	panic(fmt.Sprintf("model: unknown edge %d", e))
}

// reached reports whether instant at of edge e has come by now: at <=
// now, or at < now where e is strict.
func (s Semantics) reached(e Edge, at, now time.Time) bool {
	if s.StrictAt(e) {
		return at.Before(now)
	}
	return !at.After(now)
}

// limit is the attempt count at which a failure ends row r.
func (s Semantics) limit(r Row) int {
	if r.Limit > 0 {
		return r.Limit
	}
	return s.MaxAttempts
}

// Name spells status st as the subject does.
func (s Semantics) Name(st Status) string {
	if n, ok := s.Names[st]; ok {
		return n
	}
	return st.String()
}

// ParseStatus reads a status as the subject spells it; ok is false for an
// unknown spelling.
func (s Semantics) ParseStatus(name string) (Status, bool) {
	for st, n := range s.Names {
		if n == name {
			return st, true
		}
	}
	st, ok := ParseStatus(name)
	if _, renamed := s.Names[st]; renamed {
		return Absent, false // the seed's spelling of a status the subject spells otherwise
	}
	return st, ok
}

// Validate says what is wrong with s, if anything.
func (s Semantics) Validate() error {
	switch {
	case s.Lease <= 0:
		return fmt.Errorf("semantics: lease %v must be positive", s.Lease)
	case s.MaxAttempts < 1:
		return fmt.Errorf("semantics: max attempts %d must be at least 1", s.MaxAttempts)
	case s.Backoff == nil && (s.BackoffBase <= 0 || s.BackoffCap < 0 || s.BackoffCap > 30):
		return fmt.Errorf("semantics: backoff base %v and cap %d (or a Backoff function) are needed", s.BackoffBase, s.BackoffCap)
	case s.Rescue != nil && s.Rescue.Delay < 0:
		return fmt.Errorf("semantics: rescue delay %v is negative", s.Rescue.Delay)
	case s.Rescue != nil && s.LockHeld:
		return fmt.Errorf("semantics: a lock-held claim has no lease for a rescuer to take back (LockHeld excludes Rescue)")
	}
	for k := 0; k <= s.MaxAttempts+1; k++ {
		if lo, hi := s.BackoffRange(k); lo < 0 || hi < lo {
			return fmt.Errorf("semantics: backoff after %d attempts is [%v, %v]: want 0 <= lo <= hi", k, lo, hi)
		}
	}
	seen := map[string]Status{}
	for st := Pending; st <= Dead; st++ {
		n := s.Name(st)
		if other, dup := seen[n]; dup {
			return fmt.Errorf("semantics: %s and %s are both spelled %q", other, st, n)
		}
		seen[n] = st
	}
	return nil
}
