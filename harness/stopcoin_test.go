package harness

import (
	"testing"

	"pgregory.net/rapid"
)

// The stop coin gives checks the average length asked for, and a coin of
// 0, which is what rapid's shrinker tries first, always goes on.
func TestStopCoinAverage(t *testing.T) {
	for _, avg := range []int{1, 5, 30, 200} {
		lo := StopBand(avg)
		if lo < 1 {
			t.Fatalf("avg %d: band starts at %d: a coin of 0 would stop", avg, lo)
		}
		length := rapid.Custom(func(t *rapid.T) int {
			n := 0
			for {
				if stops(coin.Draw(t, "stop"), lo) {
					return n
				}
				n++
			}
		})
		const runs = 4000
		total := 0
		for i := range runs {
			total += length.Example(1_000_000 + i) // not the seeds the table was cut from
		}
		mean := float64(total) / runs
		if mean < 0.8*float64(avg) || mean > 1.25*float64(avg) {
			t.Errorf("avg %d: checks had %.1f actions on average", avg, mean)
		}
		t.Logf("avg %d: band [%d, %d), mean %.1f actions", avg, lo, coinMax, mean)
	}
}
