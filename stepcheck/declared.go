package stepcheck

import (
	"fmt"

	"github.com/outboxcheck/outboxcheck/model"
)

// checkSemantics says what is wrong with the semantics a run declares for
// its subject, before anything runs: a configuration error, never a
// verdict on the subject.
func checkSemantics(sem model.Semantics, subj Subject) error {
	if err := sem.Validate(); err != nil {
		return err
	}
	if _, ok := subj.(Rescuer); sem.Rescue != nil && !ok {
		return fmt.Errorf("semantics: Rescue is declared (a rescuer takes expired leases back) but the subject has no Rescue method (stepcheck.Rescuer)")
	}
	return nil
}

// notDeclared says, for each optional operation the subject does not
// have, what is therefore not applicable: reported so, never passed.
var notDeclared = map[model.Operation]map[string]string{
	model.OpRedrive:       {"Redrive": "the subject declares no redrive"},
	model.OpCleanup:       {model.RetentionSafe: "the subject declares no cleanup"},
	model.OpStats:         {model.Observability: "the subject declares no Stats"},
	model.OpNextAttemptAt: {"NextAttemptAt": "the subject declares no NextAttemptAt: when it wakes is not compared"},
}

// declared records what the subject's semantics make not applicable.
func (r *runner) declared() {
	for _, op := range r.opts.Semantics.Without {
		for k, why := range notDeclared[op] {
			r.sum.NotApplicable[k] = why
		}
	}
}
