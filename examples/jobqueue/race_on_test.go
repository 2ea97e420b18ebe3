//go:build race

package jobqueue_test

const raceEnabled = true
