package loopcheck

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

// TestSteadiestKeepsAStoryThatReplaysEveryTime: a shrink whose last
// deletion turned a cold start into a bare commit that races the relay's
// first start (cdc-late-slot: "reproduced 5 of 10") is confirmed back to
// the cold start, which replays every time; a story that comes back every
// time is confirmed once; one that no other does better than keeps; a run
// error ends the search.
func TestSteadiestKeepsAStoryThatReplaysEveryTime(t *testing.T) {
	drawn := Schedule{{Kind: "commit", N: 1}, {Kind: "kill"}, {Kind: "commit", N: 2}}
	cold := Schedule{{Kind: "cold"}, {Kind: "commit", N: 1}}
	bare := Schedule{{Kind: "commit", N: 1}}
	widened := Schedule{{Kind: "pause", Settle: true}, {Kind: "commit", N: 1}}
	type result struct{ m, n int }
	cases := []struct {
		name     string
		back     map[string]result // how often each schedule comes back
		errOn    string            // a schedule whose confirmation meets an error
		steadier []Schedule
		want     Schedule
		wantM    int
		tried    []string
	}{
		{name: "back to the cold start", back: map[string]result{fmt.Sprint(bare): {5, 10}, fmt.Sprint(cold): {10, 10}, fmt.Sprint(drawn): {3, 10}},
			want: cold, wantM: 10, tried: []string{fmt.Sprint(bare), fmt.Sprint(cold)}},
		{name: "a steadier telling first", back: map[string]result{fmt.Sprint(bare): {5, 10}, fmt.Sprint(widened): {10, 10}, fmt.Sprint(cold): {10, 10}},
			steadier: []Schedule{widened}, want: widened, wantM: 10, tried: []string{fmt.Sprint(bare), fmt.Sprint(widened)}},
		{name: "every time at once", back: map[string]result{fmt.Sprint(bare): {10, 10}},
			want: bare, wantM: 10, tried: []string{fmt.Sprint(bare)}},
		{name: "none better", back: map[string]result{fmt.Sprint(bare): {9, 10}, fmt.Sprint(cold): {9, 10}, fmt.Sprint(drawn): {2, 10}},
			want: bare, wantM: 9, tried: []string{fmt.Sprint(bare), fmt.Sprint(cold), fmt.Sprint(drawn)}},
		{name: "an error is not kept", back: map[string]result{fmt.Sprint(bare): {5, 10}, fmt.Sprint(drawn): {7, 10}},
			errOn: fmt.Sprint(cold), want: drawn, wantM: 7, tried: []string{fmt.Sprint(bare), fmt.Sprint(cold), fmt.Sprint(drawn)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var tried []string
			c := steadiest(bare, tc.steadier, []Schedule{drawn, cold}, func(s Schedule) confirmed {
				tried = append(tried, fmt.Sprint(s))
				if fmt.Sprint(s) == tc.errOn {
					return confirmed{s: s, n: 1, err: errors.New("infrastructure")}
				}
				r := tc.back[fmt.Sprint(s)]
				return confirmed{s: s, m: r.m, n: r.n}
			})
			if !slices.Equal(c.s, tc.want) || c.m != tc.wantM || c.err != nil {
				t.Errorf("kept %v, back %d of %d (err %v); want %v, back %d", c.s, c.m, c.n, c.err, tc.want, tc.wantM)
			}
			if !slices.Equal(tried, tc.tried) {
				t.Errorf("confirmed %q, want %q", tried, tc.tried)
			}
		})
	}
}
