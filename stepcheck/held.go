// The dispatchers' memories: the claims each holds, and where each is in
// publish → mark.

package stepcheck

import "pgregory.net/rapid"

// pubState is where a held claim is in publish → mark.
type pubState uint8

const (
	unpublished pubState = iota
	acked                // the broker acknowledged: MarkPublished is next
	refused              // the broker refused: MarkFailed is next
)

// held is a claim in a dispatcher's memory.
type held struct {
	c     Claimed
	state pubState
	cause error // why the publish failed, for MarkFailed
}

// hold puts c in dispatcher d's memory, replacing an older claim of its own.
func (m *machine) hold(d int, c Claimed) {
	for i, h := range m.held[d] {
		if h.c.ID == c.ID {
			m.held[d][i] = held{c: c}
			return
		}
	}
	m.held[d] = append(m.held[d], held{c: c})
}

// pickHeld draws a claim in the given state from any dispatcher that is up.
func (m *machine) pickHeld(t *rapid.T, st pubState) (d, i int) {
	type ref struct{ d, i int }
	var refs []ref
	for d := range m.held {
		for i, h := range m.held[d] {
			if h.state == st && !m.crashed[d] {
				refs = append(refs, ref{d, i})
			}
		}
	}
	if len(refs) == 0 {
		skip("no such claim held")
	}
	r := refs[rapid.IntRange(0, len(refs)-1).Draw(t, "claim")]
	return r.d, r.i
}

func (m *machine) drop(d, i int) {
	m.held[d] = append(m.held[d][:i:i], m.held[d][i+1:]...)
}
