//go:build race

package properties_test

// raceEnabled: the race detector slows every step several times over.
const raceEnabled = true
