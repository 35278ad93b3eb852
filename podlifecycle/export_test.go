package podlifecycle

// Test hooks for the external tests of this package.

// RegenerateAlways makes m generate its status at every sync and convert
// every container, into storage whose states are reused only for the same
// kind, as it did before generations whose inputs did not change were
// skipped.
func RegenerateAlways(m *Machine) { m.noSkip = true }

// Skipped returns how many generations m skipped.
func Skipped(m *Machine) uint64 { return m.skipped }

// ImageTag is imageTag: the tag and digest of an image reference, and
// whether the API server's parser takes it.
func ImageTag(image string) (tag, digest string, ok bool) { return imageTag(image) }
