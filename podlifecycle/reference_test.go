package podlifecycle_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/podlifecycletest"
	"pgregory.net/rapid"
)

// The image reference grammar the API server validates against (the
// distribution reference format), as regular expressions.
const (
	refComponent = `[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*`
	refLabel     = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
	refDomain    = `(?:` + refLabel + `(?:\.` + refLabel + `)*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?`
)

var (
	// refGrammar is a whole reference: the name (an optional domain with
	// port, then path components), an optional tag and an optional digest.
	refGrammar = regexp.MustCompile(`^((?:` + refDomain + `/)?` + refComponent + `(?:/` + refComponent + `)*)` +
		`(?::([\w][\w.-]{0,127}))?(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?$`)
	// refName splits a name of refGrammar into its domain, when it has
	// one, and its path: a first component that is a host name is the
	// domain.
	refName = regexp.MustCompile(`^(?:(` + refDomain + `)/)?(.+)$`)
	// refID is an image ID; refHex a digest's lower case hex.
	refID  = regexp.MustCompile(`^[a-f0-9]{64}$`)
	refHex = regexp.MustCompile(`^[a-f0-9]+$`)
)

// sameAsGrammar reports, for ref, what imageTag and refOracle give when
// they differ; valid says whether refOracle takes ref.
func sameAsGrammar(ref string) (diff string, valid bool) {
	tag, digest, ok := podlifecycle.ImageTag(ref)
	wtag, wdigest, wok := refOracle(ref)
	if tag != wtag || digest != wdigest || ok != wok {
		return fmt.Sprintf("%q: imageTag %q %q %v, the grammar %q %q %v", ref, tag, digest, ok, wtag, wdigest, wok), wok
	}
	return "", wok
}

// refOracle parses image as the API server's defaulting does (the
// normalized reference parser): 64 lower case hex characters alone are an
// image ID, not a name; the first path component is the domain when it
// has a dot or a colon, is localhost or has upper case, else the domain is
// docker.io (index.docker.io is docker.io too), whose names of one
// component are under library/; the repository name after the domain,
// up to its first colon, is lower case; the normalized reference matches
// refGrammar, with a path (the name without its domain) of at most 255
// characters (measured with the real parser: library/ and 247 characters
// pass, 248 do not), and a digest's
// algorithm is sha256, sha384 or sha512 with its length of lower case hex.
func refOracle(image string) (tag, digest string, ok bool) {
	if refID.MatchString(image) {
		return "", "", false
	}
	domain, rest := "docker.io", image
	if i := strings.IndexByte(image, '/'); i >= 0 && (strings.ContainsAny(image[:i], ".:") || image[:i] == "localhost" || strings.ToLower(image[:i]) != image[:i]) {
		domain, rest = image[:i], image[i+1:]
	}
	if domain == "index.docker.io" {
		domain = "docker.io"
	}
	if domain == "docker.io" && !strings.Contains(rest, "/") {
		rest = "library/" + rest
	}
	if remote, _, _ := strings.Cut(rest, ":"); strings.ToLower(remote) != remote {
		return "", "", false
	}
	m := refGrammar.FindStringSubmatch(domain + "/" + rest)
	if m == nil || len(refName.FindStringSubmatch(m[1])[2]) > 255 {
		return "", "", false
	}
	if m[3] != "" {
		alg, hex, _ := strings.Cut(m[3], ":")
		want := map[string]int{"sha256": 64, "sha384": 96, "sha512": 128}[alg]
		if want == 0 || len(hex) != want || !refHex.MatchString(hex) {
			return "", "", false
		}
	}
	return m[2], m[3], true
}

// TestPropertyImageTagIsTheReferenceGrammar: imageTag, the hand-written
// parser behind the default pull policy (rule 5), gives for every
// reference what the grammar as regular expressions and the API server's
// normalization give: the tag, the digest, and whether it is valid.
func TestPropertyImageTagIsTheReferenceGrammar(t *testing.T) {
	valid := 0
	rapid.Check(t, func(t *rapid.T) {
		// Many references a check, so that the default 100 checks reach
		// every edge of the grammar.
		for _, ref := range rapid.SliceOfN(podlifecycletest.ImageReference(), 50, 50).Draw(t, "refs") {
			diff, ok := sameAsGrammar(ref)
			if diff != "" {
				t.Fatal(diff)
			}
			if ok {
				valid++
			}
		}
	})
	if valid == 0 {
		t.Fatal("no valid reference drawn: the property compares refusals only")
	}
	t.Logf("%d valid references", valid)
}

// TestImageTagAtTheEdges: references at each edge of the grammar's
// classes and limits, which random draws reach rarely, parse as the
// grammar parses them.
func TestImageTagAtTheEdges(t *testing.T) {
	r := strings.Repeat
	valid := 0
	for _, ref := range []string{
		"app@sha256:" + r("9", 64), "app@sha256:" + r("f", 64), "app@sha256:" + r("0", 63) + "a", "app@sha256:" + r("0", 63) + "g",
		"app@sha384:" + r("f", 96), "app@sha512:" + r("9", 128), r("9", 64), r("f", 64), r("0", 63) + "g",
		"app:" + r("t", 127), "app:" + r("t", 128), "app:" + r("t", 129), "app:_", "app:.", "app:Z9",
		"[::1]:5000/app", "[aF09:]/app", "[g]/app", "[]/app", "[a]/app", "[:]:5/app", "r.io:/app", "r.io:5/app", ":5/app",
		"a-b.c/x", "a.b-/x", "-a.b/x", "A.b/x", "aZ9.io/x", "a..b/x",
		"a__b", "a___b", "a--b", "a.-b", "a._b", "a_", "_a",
		"docker.io/" + r("a", 247), "docker.io/" + r("a", 248), "index.docker.io/" + r("a", 247), "index.docker.io/a/" + r("b", 253),
	} {
		diff, ok := sameAsGrammar(ref)
		if diff != "" {
			t.Error(diff)
		}
		if ok {
			valid++
		}
	}
	if valid < 10 {
		t.Errorf("only %d valid references: the edges are not reached", valid)
	}
}
