package model

// Hold is a lock-held claim (Semantics.LockHeld): the row as its
// claimant's open transaction sees it, and the claimant (the harness's
// dispatcher number) whose sessions hold it.
type Hold struct {
	Row    Row
	Holder int
}

// Release ends every lock-held claim of claimant holder (a dispatcher):
// its sessions ended, their open transactions rolled back, and each row
// it held is again as it was before the claim. A mark of one of them whose outcome the
// same step learns (its failure is what ended the session) may still
// have committed before the end: until the next observation it is judged
// as if the claim held.
func Release(s State, holder int) State {
	s = s.clone()
	for _, id := range ids(s.Held) {
		if h := s.Held[id]; h.Holder == holder {
			delete(s.Held, id)
			s.Ended[id] = h
		}
	}
	return s
}
