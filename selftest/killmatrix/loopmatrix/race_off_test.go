//go:build !race

package loopmatrix_test

const raceEnabled = false
