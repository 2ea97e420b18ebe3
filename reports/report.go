// Package reports renders a recorded run: report.json (a versioned
// schema), report.md, report.html (self-contained, with an SVG timeline)
// and JUnit XML. It renders recorded data only; it runs nothing.
package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/outboxcheck/outboxcheck/harness"
)

// Schema names the report.json format. A change that breaks readers bumps
// it; readers refuse schemas they do not know.
const Schema = "outboxcheck.report/v1"

// Verdicts of a run and of a property.
const (
	Pass           = "pass"           // every property held
	Violation      = "violation"      // a property was violated
	Panic          = "panic"          // the subject panicked
	Infrastructure = "infrastructure" // the harness's plumbing failed; no verdict on the subject
	Interrupted    = "interrupted"    // SIGINT or SIGTERM stopped the run before it found anything
	// SubjectError: an operation of the subject never succeeded, failing
	// with errors of its own: the subject could not be checked.
	SubjectError = "subject-error"

	Held          = "held"
	Violated      = "violated"
	NotApplicable = "not-applicable"
	NotChecked    = "not-checked" // the run stopped before a verdict (infrastructure)
	// NotJudged: the property applies, but nothing in the run put it to
	// the test (a probe never taken, an end state never reached): it
	// neither held nor failed.
	NotJudged = "not-judged"
)

// Report is one run, or the merge of shards.
type Report struct {
	Schema      string      `json:"schema"`
	Environment Environment `json:"environment"`
	// Contract is what the subject was checked through: StepContract or
	// LoopContract; absent from older reports.
	Contract string `json:"contract,omitempty"`
	Subject  string `json:"subject"`
	// SQLQueries and SQLSchema are the SQL contract's files, when it ran:
	// relative paths are copies inside the report directory (replay uses
	// them), absolute ones the user's files themselves (no report
	// directory). SQLFrom are the user's files the copies were taken from.
	SQLQueries string    `json:"sql_queries,omitempty"`
	SQLSchema  string    `json:"sql_schema,omitempty"`
	SQLFrom    []string  `json:"sql_from,omitempty"`
	Args       []string  `json:"args"`  // the command line after `run`
	Seed       uint64    `json:"seed"`  // the run's first seed
	Shard      string    `json:"shard"` // "i/n", or "" for an unsharded run
	Faults     bool      `json:"faults"`
	Concurrent bool      `json:"concurrent"`
	Started    time.Time `json:"started"`
	Seconds    float64   `json:"seconds"`
	Checks     int       `json:"checks"`
	ShrinkRuns int       `json:"shrink_runs"`
	Steps      int       `json:"steps"` // actions run over all checks, shrinking excluded
	// StepsPerSecond is Steps per wall second up to the first failure
	// (SetRate).
	StepsPerSecond float64         `json:"steps_per_second"`
	Verdict        string          `json:"verdict"`
	Message        string          `json:"message,omitempty"` // the failure in one line
	Properties     []Property      `json:"properties"`
	Coverage       Coverage        `json:"coverage"`
	Failure        *Counterexample `json:"counterexample,omitempty"`
	Merged         []string        `json:"merged,omitempty"` // shards this report merges
	// Interrupted says a signal stopped the run. With a violation, the
	// counterexample is shrunk as far as it got before the signal.
	Interrupted bool `json:"interrupted,omitempty"`
	// Progress is the run over time, one checkpoint per generated check
	// (per schedule of a loop run) as it ended: report.html plots it.
	// Absent from older reports and from merges (each shard keeps its
	// own clock).
	Progress []Checkpoint `json:"progress,omitempty"`
	// Shrinking is when rapid shrank the failure; absent when it did not.
	Shrinking *Span `json:"shrinking,omitempty"`
}

// Checkpoint is where the run stood when one generated check ended.
type Checkpoint struct {
	Check int `json:"check"`
	// At is when the check ended, in seconds from the run's start.
	At    float64 `json:"at"`
	Steps int     `json:"steps"` // the check's own steps
	// Faults are the faults injected so far, of every kind the coverage
	// counts; Struck, of them, those that took effect so far (network
	// faults a request reached, consumer crashes that reached their
	// failpoint, and broker faults and other crashes, which act at once).
	Faults int `json:"faults"`
	Struck int `json:"struck"`
}

// Span is a stretch of the run, in seconds from its start.
type Span struct {
	From float64 `json:"from"`
	To   float64 `json:"to"`
}

// Environment is where the run happened.
type Environment struct {
	Tool           string `json:"tool"` // outboxcheck's module version and commit from its build info ("(devel)" alone when built without VCS stamping)
	Go             string `json:"go"`
	OS             string `json:"os"`
	Postgres       string `json:"postgres"`
	PostgresSource string `json:"postgres_source"` // url, docker or local
	// ServerSettings are the server's settings that differ from
	// PostgreSQL's compiled-in defaults, name → value as SHOW prints it
	// (pgscratch.ServerSettings), so a verdict says what server it came from:
	// a harness-owned cluster's fsync=off, a CI server's own timeouts.
	// Empty: none differ; null: not recorded.
	ServerSettings map[string]string `json:"server_settings"`
	// Broker is the loop contract's broker when it is a real one
	// ("NATS JetStream …, dedupe window 5s"); empty: the harness's own.
	Broker string `json:"broker,omitempty"`
}

// Property is one property's verdict.
type Property struct {
	Name string `json:"name"`
	Kind string `json:"kind"` // safety or liveness
	// Checked says when its check runs: "after every action", "after the
	// drain", "at the end, after the drain", "per probe"... Absent from
	// older reports, where Kind says it (When).
	Checked string `json:"checked,omitempty"`
	// Judged counts its judgements over the run's generated checks, in
	// Unit (steps, end states, probes), where the contract records them
	// (the loop contract); absent otherwise.
	Judged  *int   `json:"judged,omitempty"`
	Unit    string `json:"unit,omitempty"`
	Verdict string `json:"verdict"`
	Detail  string `json:"detail,omitempty"`
}

// Coverage is what the faults did.
type Coverage struct {
	// Faults, where the contract counts every kind of its nemesis per
	// place (the loop contract), is the coverage table: each kind per
	// link, dispatcher, broker or zone, the kinds never drawn as rows of
	// zeros. Network, Broker* and Crashes then repeat part of it.
	Faults        []FaultCoverage         `json:"faults,omitempty"`
	Network       map[string]KindCoverage `json:"network"`
	BrokerRefused int                     `json:"broker_refused"`
	BrokerAckLost int                     `json:"broker_ack_lost"`
	// BrokerDuplicates: publishes the broker accepted of an event it
	// already had (at-least-once publishing at work).
	BrokerDuplicates int `json:"broker_duplicates"`
	// BrokerStoredTwice: with a real broker (JetStream), messages its
	// stream holds of an event it already held: retries past its dedupe
	// window.
	BrokerStoredTwice int `json:"broker_stored_twice,omitempty"`
	// SlotRetainedMax: the most write-ahead log, in bytes, a replication
	// slot of the subject's (a CDC relay's) held back at any step, and
	// SlotRetained which slot: a figure, not a judgement.
	SlotRetainedMax int64             `json:"slot_retained_wal_max_bytes,omitempty"`
	SlotRetained    string            `json:"slot_retained_wal_slot,omitempty"`
	Crashes         map[string]int    `json:"crashes"`
	NotApplicable   map[string]string `json:"not_applicable"`
	// NeverSucceeded names each kind of subject call that was made and
	// never succeeded, with its count and first error: a run that passed
	// while an operation never worked says so.
	NeverSucceeded map[string]string `json:"never_succeeded,omitempty"`
}

// FaultCoverage counts one kind of fault at one place: injected,
// struck (took effect), affected (the requests, publishes or deliveries
// it changed); Note says what these count for the kind.
type FaultCoverage struct {
	Kind     string `json:"kind"`
	Where    string `json:"where,omitempty"`
	Injected int    `json:"injected"`
	Struck   int    `json:"struck"`
	Affected int    `json:"affected"`
	Note     string `json:"note,omitempty"`
}

// NeverStruck: injected, and never took effect.
func (f FaultCoverage) NeverStruck() bool { return f.Injected > 0 && f.Struck == 0 }

// NeverDrawn: no fault of the kind was put on at all.
func (f FaultCoverage) NeverDrawn() bool { return f.Injected == 0 }

// KindCoverage counts one network fault kind.
type KindCoverage struct {
	Injected int `json:"injected"`
	Struck   int `json:"struck"`
	Affected int `json:"affected"`
}

// Counterexample is the shrunk failing check.
type Counterexample struct {
	Property string `json:"property,omitempty"`
	// Operation is, for a subject error, the subject's operation that
	// never succeeded; the steps are its first failure's check, up to it.
	Operation  string `json:"operation,omitempty"`
	Message    string `json:"message"`
	FirstCheck int    `json:"first_failed_at_check"`
	// FirstAt is when that check ended, in seconds from the run's start:
	// with several schedules at once (the loop contract), checks end out
	// of their numbers' order, and the plot marks the failure here.
	FirstAt float64 `json:"first_failed_at_seconds,omitempty"`
	Steps   []Step  `json:"steps"`
	// FailFile is rapid's fail file, relative to the report's directory:
	// `outboxcheck replay` runs exactly this check again.
	FailFile string `json:"fail_file,omitempty"`
	// Payments is the failing end state in full, where the contract
	// judges one (the loop contract's no-loss, timely-delivery): every
	// committed payment's outcome, in numeric order. The message only
	// summarises it.
	Payments []PaymentOutcome `json:"payments,omitempty"`
}

// PaymentOutcome is what became of one committed payment: delivered,
// dead, pending or lost, and what the harness saw of one not delivered.
type PaymentOutcome struct {
	Payment string `json:"payment"`
	Outcome string `json:"outcome"`
	Why     string `json:"why,omitempty"`
}

// Step is one action of the counterexample: what the subject returned
// (Result) and, where they differ, what the model expected (Expect).
type Step struct {
	// N is the step's number. A loop schedule's step may record several
	// entries, which share it; 0 is after its last step (the drain).
	N      int    `json:"n"`
	Clock  string `json:"clock"` // the harness's clock, never the wall's
	Action string `json:"action"`
	Actor  string `json:"actor"`
	Input  string `json:"input"`
	Result string `json:"result"`
	Expect string `json:"expect,omitempty"`
	// Outcome is the call's outcome: ok, failed or unknown (an error that
	// leaves the effect unknown); empty for an action that calls nothing.
	Outcome string `json:"outcome,omitempty"`
	// Broker lists the event_ids the broker accepted during the step.
	Broker []string `json:"broker,omitempty"`
	// Model and Rows are each event's status after the step, event_id →
	// status: as the model expected it ("A|B": an unknown outcome left
	// either) and as the database showed it (ABSENT: no row). Rows is
	// absent where the step was not read back.
	Model map[string]string `json:"model,omitempty"`
	Rows  map[string]string `json:"rows,omitempty"`
}

// SetRate sets StepsPerSecond: the generated checks' steps per wall
// second up to the first failure (shrinking excluded), or over the whole
// run if none failed. Call it once Steps and Seconds are set.
func (r *Report) SetRate(sum harness.Summary) {
	secs := r.Seconds
	if sum.First != nil {
		secs = sum.First.Elapsed.Seconds()
	}
	r.StepsPerSecond = 0
	if secs > 0 {
		r.StepsPerSecond = float64(r.Steps) / secs
	}
}

// ExitCode is the code the CLI exits with for this verdict.
func (r *Report) ExitCode() int {
	switch r.Verdict {
	case Pass:
		return 0
	case Violation, Panic:
		return 1
	case Interrupted:
		return 130 // as a shell reports SIGINT
	case SubjectError:
		return 4
	}
	return 3
}

// ErrNotAReport is returned by Read for a directory without a readable
// report.json of a known schema.
var ErrNotAReport = errors.New("not an outboxcheck report")

// Read loads dir/report.json.
func Read(dir string) (*Report, error) {
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotAReport, err)
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%w: %s/report.json: %v", ErrNotAReport, dir, err)
	}
	if r.Schema != Schema {
		return nil, fmt.Errorf("%w: %s/report.json has schema %q, want %q", ErrNotAReport, dir, r.Schema, Schema)
	}
	return &r, nil
}

// SlotText says what the subject's replication slots held back, in words.
func (c Coverage) SlotText() string {
	return fmt.Sprintf("Write-ahead log a replication slot held back (a relay that reads the log keeps it while it is down; the server keeps every byte written since the slot's position, by other schedules on it too): up to %s, slot %s",
		harness.Bytes(c.SlotRetainedMax), c.SlotRetained)
}
