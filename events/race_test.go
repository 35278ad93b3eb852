//go:build race

package events_test

// distinctEvents is the number of distinct events of the bound tests: a tenth of a million
// under the race detector, which makes them ten times slower; still 25 times the cache size.
const distinctEvents = 100_000
