package loopcheck

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/outboxcheck/outboxcheck/faults"
	"github.com/outboxcheck/outboxcheck/harness"
)

// FileFormat names the schedule file's schema.
const FileFormat = "outboxcheck.loop-schedule/v1"

// File is a failing schedule as saved: enough to replay it (ReplayFile,
// outboxcheck replay) with the options it ran with.
type File struct {
	Format   string   `json:"format"`
	Subject  string   `json:"subject,omitempty"`
	Property string   `json:"property"`
	Message  string   `json:"message,omitempty"`
	Options  Options  `json:"options"`
	Schedule Schedule `json:"schedule"`
	// Command and Dir are a process subject's (proccheck.Command): the
	// program with its arguments, and the directory it ran in.
	Command []string `json:"command,omitempty"`
	Dir     string   `json:"dir,omitempty"`
}

// WriteFile saves f at path, creating its directory; a reader never sees
// half a file (it is written beside and renamed).
func WriteFile(path string, f File) error {
	f.Format = FileFormat
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ReadFile loads a schedule file and checks that every step is one the
// harness can run.
func ReadFile(path string) (File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return File{}, err
	}
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		return File{}, fmt.Errorf("%s: not a schedule file: %v", path, err)
	}
	if f.Format != FileFormat {
		return File{}, fmt.Errorf("%s: format %q, want %q", path, f.Format, FileFormat)
	}
	if len(f.Schedule) == 0 {
		return File{}, fmt.Errorf("%s: the schedule is empty", path)
	}
	for i, st := range f.Schedule {
		if err := st.valid(f.Options.withDefaults().Dispatchers); err != nil {
			return File{}, fmt.Errorf("%s: step %d: %v", path, i+1, err)
		}
	}
	return f, nil
}

func (s Step) valid(dispatchers int) error {
	switch s.Kind {
	case "commit", "rollback", "heal", "broker-down", "broker-up", "broker-slow", "ack-lost", "poison", "slow-payment", "redeliver", "pause", "hold-tx", "wedge", "strand", "head-of-line", "crash-loop", "cold", "schema-change", "stop-mid-batch", "window-outage", "crash-db":
	case "freeze":
		if s.For <= 0 {
			return fmt.Errorf("a freeze of %v", s.For)
		}
	case "crash-consumer":
		if s.At != harness.BeforeCommit && s.At != harness.AfterCommit {
			return fmt.Errorf("unknown failpoint %q", s.At)
		}
	case "partition", "broker-link":
		if !slices.Contains(faults.Loop, s.Fault) {
			return fmt.Errorf("unknown fault %q", s.Fault)
		}
	case "timezone":
		if !slices.Contains(zones, s.Zone) {
			return fmt.Errorf("unknown time zone %q", s.Zone)
		}
	case "kill", "restart", "stop":
		if s.N < 0 || s.N >= dispatchers {
			return fmt.Errorf("no dispatcher %d", s.N)
		}
	default:
		return fmt.Errorf("unknown step kind %q", s.Kind)
	}
	return nil
}

// ReplayFile replays the schedule saved at path n times, with the options
// it ran with; opts gives the database, OnCheck and Interrupt.
func ReplayFile(newSubject NewSubject, opts Options, path string, n int) (reproduced int, f File, err error) {
	if f, err = ReadFile(path); err != nil {
		return 0, f, err
	}
	o := f.Options
	o.DatabaseURL, o.OnCheck, o.Interrupt = opts.DatabaseURL, opts.OnCheck, opts.Interrupt
	reproduced, _, err = Replay(newSubject, o, f.Schedule, f.Property, n)
	return reproduced, f, err
}
