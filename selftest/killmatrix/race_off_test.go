//go:build !race

package killmatrix_test

const raceEnabled = false
