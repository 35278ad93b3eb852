package podlifecycletest

import (
	"strings"

	"pgregory.net/rapid"
)

// ImageReference draws image references near the grammar's edges: every
// boundary character of its classes, separators, domains with ports and
// IPv6 addresses, tags and digests of every algorithm, at lengths around
// the limits, and now and then a character the grammar refuses: about one
// in eight is valid. It checks the default pull policy of a container's
// image (spec/podlifecycle.md rule 5) against the API server's parser.
func ImageReference() *rapid.Generator[string] {
	return rapid.Custom(drawReference)
}

func drawReference(t *rapid.T) string {
	chars := func(label, class string, min, max int) string {
		n := rapid.IntRange(min, max).Draw(t, label+"Len")
		var b strings.Builder
		for range n {
			b.WriteByte(class[rapid.IntRange(0, len(class)-1).Draw(t, label)])
		}
		return b.String()
	}
	const (
		edges = "09afgzAFGZ"
		all   = edges + "-_.:/@[]+ "
	)
	var b strings.Builder
	switch rapid.IntRange(0, 3).Draw(t, "domain") {
	case 1:
		b.WriteString(chars("label", edges+"-", 1, 6) + "." + chars("label2", edges+"-", 1, 4))
	case 2:
		b.WriteString("[" + chars("ipv6", "09afgAFG:", 0, 6) + "]")
	case 3:
		b.WriteString(rapid.SampledFrom([]string{"localhost", "Upper", "r.io", "h", "docker.io", "index.docker.io"}).Draw(t, "host"))
	}
	if b.Len() > 0 {
		if rapid.Bool().Draw(t, "port") {
			b.WriteString(":" + chars("portNum", "0945a", 0, 4))
		}
		b.WriteString("/")
	}
	for i := range rapid.IntRange(1, 3).Draw(t, "components") {
		if i > 0 {
			b.WriteString("/")
		}
		b.WriteString(chars("comp", "09az", 1, 3))
		for range rapid.IntRange(0, 2).Draw(t, "seps") {
			b.WriteString(rapid.SampledFrom([]string{".", "_", "__", "-", "--", "..", "___", "A", "G", "+"}).Draw(t, "sep"))
			b.WriteString(chars("comp2", "09az", 1, 3))
		}
	}
	if rapid.IntRange(0, 9).Draw(t, "long") == 0 {
		b.WriteString(strings.Repeat("a", rapid.IntRange(225, 260).Draw(t, "pad")))
	}
	if rapid.Bool().Draw(t, "tag") {
		b.WriteString(":" + chars("tag", edges+"_.-", 0, 4))
		if rapid.IntRange(0, 9).Draw(t, "longTag") == 0 {
			b.WriteString(strings.Repeat("t", rapid.IntRange(120, 130).Draw(t, "tagPad")))
		}
	}
	if rapid.Bool().Draw(t, "digest") {
		alg := rapid.SampledFrom([]string{"sha256", "sha384", "sha512", "md5", "sha256+b64", "Sha256", ""}).Draw(t, "alg")
		n := rapid.SampledFrom([]int{64, 96, 128, 32, 63, 65}).Draw(t, "hexLen")
		hex := strings.Repeat("0", n)
		if n > 0 && rapid.Bool().Draw(t, "hexEdge") {
			i := rapid.IntRange(0, n-1).Draw(t, "hexAt")
			hex = hex[:i] + string(rapid.SampledFrom([]byte("9afgAFG")).Draw(t, "hexChar")) + hex[i+1:]
		}
		b.WriteString("@" + alg + ":" + hex)
	}
	ref := b.String()
	if rapid.IntRange(0, 4).Draw(t, "noise") == 0 && len(ref) > 0 {
		i := rapid.IntRange(0, len(ref)-1).Draw(t, "at")
		ref = ref[:i] + string(all[rapid.IntRange(0, len(all)-1).Draw(t, "c")]) + ref[i+1:]
	}
	return ref
}
