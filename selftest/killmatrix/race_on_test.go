//go:build race

package killmatrix_test

const raceEnabled = true
