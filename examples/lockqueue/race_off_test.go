//go:build !race

package lockqueue_test

const raceEnabled = false
