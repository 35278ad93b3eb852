package conformance

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"testing"
)

// minChecks is how many generated inputs each differential property runs at
// least, unless -rapid.checks says otherwise.
const minChecks = 5000

// upstreamVersion is the Kubernetes release the suite compares against; it
// must match the k8s.io/kubernetes requirement in go.mod.
const upstreamVersion = "v1.37.2"

var report = struct {
	sync.Mutex
	rows map[string][2]int // property -> inputs, mismatches
}{rows: map[string][2]int{}}

// record notes the outcome of one property for the closing report.
func record(property string, inputs, mismatches int) {
	report.Lock()
	defer report.Unlock()
	r := report.rows[property]
	report.rows[property] = [2]int{r[0] + inputs, r[1] + mismatches}
}

func checks() int {
	n, _ := strconv.Atoi(flag.Lookup("rapid.checks").Value.String())
	return n
}

func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "rapid.checks" })
	if !explicit {
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
	fmt.Printf("%-68s %8s %10s\n", "property", "inputs", "mismatches")
	for _, n := range names {
		fmt.Printf("%-68s %8d %10d\n", n, report.rows[n][0], report.rows[n][1])
	}
	os.Exit(code)
}
