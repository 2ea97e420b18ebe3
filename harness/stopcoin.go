package harness

import (
	"math"
	"slices"
	"sync"

	"pgregory.net/rapid"
)

// A contract's check is a loop of steps of ours, not rapid's t.Repeat.
// t.Repeat asks "one more step?" with a 53-bit coin that goes on above a
// threshold, and rapid's shrinker pins each such coin at its threshold bit
// by bit: up to a thousand replays per step of the counterexample, each a
// real run against PostgreSQL. A 3-step counterexample took the whole 30 s
// shrink budget, and longer ones ran out of time with steps left in.
//
// Our coin stops only on a band of values away from 0, so every "go on"
// coin shrinks to 0 in one replay. Each step is one rapid.Custom draw, so
// rapid's shrinker still deletes whole steps, as it did t.Repeat's.

const (
	coinMax = 1<<16 - 1
	// coinSamples sizes the table the band is cut from; it bounds the
	// average too (MaxSteps).
	coinSamples = 50_000
	// MaxSteps is the largest average number of actions per check.
	MaxSteps = 10_000
)

var coin = rapid.IntRange(0, coinMax)

// coinTable is coinSamples draws of coin, sorted, without coinMax: rapid
// draws integers with a bias (0, small values and the maximum come up
// often), so the band is cut from the distribution as rapid draws it.
// Example with a fixed seed makes the table the same on every machine.
var coinTable = sync.OnceValue(func() []int {
	s := make([]int, 0, coinSamples)
	for i := range coinSamples {
		if v := coin.Example(i); v != coinMax {
			s = append(s, v)
		}
	}
	slices.Sort(s)
	return s
})

// StopBand returns lo: a coin in [lo, coinMax) stops the check, which
// happens with probability 1/(1+avg), so a check has avg actions on
// average, as with rapid's -rapid.steps.
func StopBand(avg int) int {
	s := coinTable()
	want := int(math.Round(float64(coinSamples) / float64(1+avg)))
	want = min(max(want, 1), len(s))
	return max(s[len(s)-want], 1) // 0 always goes on: it is what shrinking tries first
}

// stops reports whether coin v stops the check, for a band from lo.
func stops(v, lo int) bool { return v >= lo && v < coinMax }

// Stops draws the stop coin: true ends the check, for a band from lo
// (StopBand).
func Stops(t *rapid.T, lo int) bool { return stops(coin.Draw(t, "stop"), lo) }

// DrawStop draws the step loop's stop coin for checks of avg steps on
// average: true ends the check. A loop of its own (the loop contract's
// schedules) that draws one rapid.Custom per step, this coin first,
// shrinks as the step contract's does: each "go on" coin shrinks to 0 in
// one replay, and rapid deletes whole steps.
func DrawStop(t *rapid.T, avg int) bool {
	return Stops(t, StopBand(min(max(avg, 1), MaxSteps)))
}
