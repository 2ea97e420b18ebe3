//go:build race

package loopcheck_test

// raceEnabled: timed shrinking is not asserted under the race detector.
const raceEnabled = true
