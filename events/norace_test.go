//go:build !race

package events_test

// distinctEvents is the number of distinct events of the bound tests.
const distinctEvents = 1_000_000
