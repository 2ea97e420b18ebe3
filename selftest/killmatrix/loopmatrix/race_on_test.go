//go:build race

package loopmatrix_test

const raceEnabled = true
