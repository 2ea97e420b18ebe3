package reports

import (
	"fmt"
	"strings"
)

// Contracts a run checks its subject through (Report.Contract).
const (
	StepContract = "step" // rapid drives the subject step by step
	LoopContract = "loop" // the subject runs its own loop; black-box, real time
)

// oneRun checks that rs are the shards of one run, each exactly once: the
// same contract and subject throughout, each carrying a shard i/n of one
// n, and every i from 1 to n present. It is pure.
func oneRun(rs []*Report) error {
	first := rs[0]
	var n int
	seen := map[int]bool{}
	for _, r := range rs {
		if r.Contract != first.Contract {
			return fmt.Errorf("reports of different contracts: %s and %s", contractName(first), contractName(r))
		}
		if r.Subject != first.Subject {
			return fmt.Errorf("reports of different subjects: %s and %s", first.Subject, r.Subject)
		}
		i, rn, ok := parseShard(r.Shard)
		switch {
		case !ok:
			return fmt.Errorf("a report of %s is not a shard (its run had no --shard i/n)", r.Subject)
		case n != 0 && rn != n:
			return fmt.Errorf("shards of runs split differently: %s and %s", first.Shard, r.Shard)
		case seen[i]:
			return fmt.Errorf("shard %s given twice", r.Shard)
		}
		n, seen[i] = rn, true
	}
	var missing []string
	for i := 1; i <= n; i++ {
		if !seen[i] {
			missing = append(missing, fmt.Sprintf("%d/%d", i, n))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("shard %s missing: a merge needs every shard of the run", strings.Join(missing, ", "))
	}
	return nil
}

// parseShard parses "i/n" with 1 ≤ i ≤ n, as run's --shard writes it.
func parseShard(s string) (i, n int, ok bool) {
	if _, err := fmt.Sscanf(s, "%d/%d", &i, &n); err != nil || fmt.Sprintf("%d/%d", i, n) != s {
		return 0, 0, false
	}
	return i, n, n >= 1 && i >= 1 && i <= n
}

// contractName names r's contract for a message; reports older than the
// field recorded none.
func contractName(r *Report) string {
	if r.Contract == "" {
		return "(unrecorded)"
	}
	return r.Contract
}
