//go:build !race

package loopcheck_test

const raceEnabled = false
