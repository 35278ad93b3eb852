package conformance

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"testing"

	"github.com/nodestate/nodestate/kubeversion"
)

// minChecks is how many generated inputs each differential property runs at
// least, unless -rapid.checks says otherwise.
const minChecks = 5000

// upstreamVersion is the Kubernetes release the suite compares against; it
// must match the k8s.io/kubernetes requirement in go.mod. profile is
// nodestate's profile of that release.
const upstreamVersion = "v1.37.2"

const profile = kubeversion.V1_37

var report = struct {
	sync.Mutex
	rows     map[string][2]int // property -> inputs, mismatches
	excluded map[[2]string]int // property, documented difference -> inputs
}{rows: map[string][2]int{}, excluded: map[[2]string]int{}}

// record notes the outcome of one property for the closing report: the
// inputs it compared and the mismatches among them. rapid stops at the first
// mismatch and then shrinks it, so a failing property counts the failing
// inputs of its shrinking too.
func record(property string, inputs, mismatches int) {
	report.Lock()
	defer report.Unlock()
	r := report.rows[property]
	report.rows[property] = [2]int{r[0] + inputs, r[1] + mismatches}
}

// exclude notes an input a property did not compare because it falls on a
// documented difference between nodestate and upstream; the report lists
// them apart.
func exclude(property, difference string) {
	report.Lock()
	defer report.Unlock()
	report.excluded[[2]string{property, difference}]++
}

// checksExplicit is whether -rapid.checks was given on the command line.
var checksExplicit bool

func checks() int {
	n, _ := strconv.Atoi(flag.Lookup("rapid.checks").Value.String())
	return n
}

func TestMain(m *testing.M) {
	flag.Parse()
	flag.Visit(func(f *flag.Flag) { checksExplicit = checksExplicit || f.Name == "rapid.checks" })
	if !checksExplicit {
		if err := flag.Set("rapid.checks", strconv.Itoa(minChecks)); err != nil {
			panic(err)
		}
	}
	code := m.Run()
	names := make([]string, 0, len(report.rows))
	for n := range report.rows {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Printf("\nconformance against Kubernetes %s\n", upstreamVersion)
	fmt.Printf("%-76s %8s %10s\n", "property", "inputs", "mismatches")
	for _, n := range names {
		fmt.Printf("%-76s %8d %10d\n", n, report.rows[n][0], report.rows[n][1])
	}
	if len(report.excluded) > 0 {
		keys := make([][2]string, 0, len(report.excluded))
		for k := range report.excluded {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			return keys[i][0] < keys[j][0] || keys[i][0] == keys[j][0] && keys[i][1] < keys[j][1]
		})
		fmt.Printf("\nnot compared (documented differences, README \"Faithfulness\")\n")
		for _, k := range keys {
			fmt.Printf("%-76s %8d  %s\n", k[0], report.excluded[k], k[1])
		}
	}
	os.Exit(code)
}
