//go:build !race

package statussync_test

const raceEnabled = false
