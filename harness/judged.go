package harness

// PropertyRecord is how a contract checked one property over a run: when
// its check runs, how often it was judged, and why it did not apply or
// was never judged. A contract that records these (the loop contract,
// in Summary.Properties) has its verdicts built from them, so that a
// property judged zero times reads "not judged", never "held".
type PropertyRecord struct {
	Name string
	Kind string // safety or liveness
	// Checked says when the check runs: "after every step and at the
	// end", "at the end, after the drain", "per probe".
	Checked string
	// Judged counts the judgements over the run's generated checks (as
	// Summary.Checks and Steps count them: shrinking excluded), in Unit:
	// steps, end states, probes, retries.
	Judged int
	Unit   string
	// NotApplicable says why the property cannot apply to this subject
	// (its guarantee is not declared); "" when it applies.
	NotApplicable string
	// NotJudged says why an applicable property was judged zero times.
	NotJudged string
}

// PaymentOutcome is what became of one committed payment in a check's end
// state (the loop contract's judge): delivered, dead, pending or lost,
// and, for a payment not delivered, what the harness saw of it.
type PaymentOutcome struct {
	Payment string
	Outcome string
	Why     string
}
