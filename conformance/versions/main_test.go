package versions

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodestate/nodestate/kubeversion"
)

// minChecks is how many generated inputs each property runs at least per
// release, unless -rapid.checks says otherwise.
const minChecks = 5000

// minor is one release the driver compares with: the directory of its
// command's module and nodestate's profile of it.
type minor struct {
	dir     string
	profile kubeversion.Version
	// explicit says the minor runs only when -versions names it.
	explicit bool
}

// minors are the older releases, and v1.37 through the command built in the
// conformance module itself: the conformance module compares with v1.37.2
// in-process, and -versions v1.37 checks that this driver finds the same
// there (0 mismatches).
var minors = []minor{
	{"v1.33", kubeversion.V1_33, false},
	{"v1.34", kubeversion.V1_34, false},
	{"v1.35", kubeversion.V1_35, false},
	{"v1.36", kubeversion.V1_36, false},
	{"v1.37", kubeversion.V1_37, true},
}

// dirOf is the directory of the command of mi, relative to this package.
func (mi minor) dirOf() string {
	if mi.profile == kubeversion.V1_37 {
		return "../cmd/upstream"
	}
	return mi.dir
}

var only = flag.String("versions", "", "comma-separated minors to compare with (v1.33,...,v1.37); empty: v1.33 to v1.36")

// upstreams are the running upstream commands of the selected minors, in
// minors' order.
var upstreams []*upstream

var report = struct {
	sync.Mutex
	rows     map[[2]string][2]int // minor, property -> inputs, mismatches
	excluded map[[3]string]int    // minor, property, documented difference -> inputs
	notRun   map[[2]string]string // minor, property -> why
	// classes are the mismatches of a property by class, with an example
	// of each (the shortest seen).
	classes  map[[3]string]int    // minor, property, class -> mismatches
	examples map[[3]string]string // minor, property, class -> example
}{rows: map[[2]string][2]int{}, excluded: map[[3]string]int{}, notRun: map[[2]string]string{},
	classes: map[[3]string]int{}, examples: map[[3]string]string{}}

// record notes the outcome of one property against one minor.
func record(minor, property string, inputs, mismatches int) {
	report.Lock()
	defer report.Unlock()
	k := [2]string{minor, property}
	r := report.rows[k]
	report.rows[k] = [2]int{r[0] + inputs, r[1] + mismatches}
}

// exclude notes an input not compared because it falls on a documented
// difference.
func exclude(minor, property, difference string) {
	report.Lock()
	defer report.Unlock()
	report.excluded[[3]string{minor, property, difference}]++
}

// classify notes a mismatch of a property in a class, with its example.
func classify(minor, property, class, example string) {
	report.Lock()
	defer report.Unlock()
	k := [3]string{minor, property, class}
	report.classes[k]++
	if old, ok := report.examples[k]; !ok || len(example) < len(old) {
		report.examples[k] = example
	}
}

// notRun notes a property that cannot run against a minor, and why.
func notRun(minor, property, why string) {
	report.Lock()
	defer report.Unlock()
	report.notRun[[2]string{minor, property}] = why
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
	if testing.Short() {
		fmt.Println("conformance of the older minors: skipped with -short (each needs its release's kubelet packages compiled)")
		os.Exit(m.Run())
	}
	bin, err := os.MkdirTemp("", "nodestate-upstream-")
	if err != nil {
		panic(err)
	}
	code := run(m, bin)
	os.RemoveAll(bin)
	os.Exit(code)
}

func run(m *testing.M, bin string) int {
	for _, mi := range minors {
		named := strings.Contains(","+*only+",", ","+mi.dir+",")
		if *only != "" && !named || *only == "" && mi.explicit {
			continue
		}
		u, err := start(mi, bin)
		if err != nil {
			fmt.Fprintf(os.Stderr, "upstream %s: %v\n", mi.dir, err)
			return 1
		}
		defer u.stop()
		upstreams = append(upstreams, u)
	}
	code := m.Run()
	for _, u := range upstreams {
		printSection(u)
	}
	return code
}

func printSection(u *upstream) {
	report.Lock()
	defer report.Unlock()
	fmt.Printf("\nconformance against Kubernetes %s (profile %s; the command of %s, built in %s)\n",
		u.info.Release, u.minor.profile, filepath.ToSlash(filepath.Join("conformance/versions", u.minor.dirOf())), u.built.Round(time.Second))
	fmt.Printf("%-76s %8s %10s\n", "property", "inputs", "mismatches")
	var names []string
	for k := range report.rows {
		if k[0] == u.minor.dir {
			names = append(names, k[1])
		}
	}
	sort.Strings(names)
	for _, n := range names {
		r := report.rows[[2]string{u.minor.dir, n}]
		fmt.Printf("%-76s %8d %10d\n", n, r[0], r[1])
	}
	var not []string
	for k := range report.notRun {
		if k[0] == u.minor.dir {
			not = append(not, k[1])
		}
	}
	sort.Strings(not)
	for _, n := range not {
		fmt.Printf("%-76s %8s %10s  %s\n", n, "not run", "", report.notRun[[2]string{u.minor.dir, n}])
	}
	var cl [][3]string
	for k := range report.classes {
		if k[0] == u.minor.dir {
			cl = append(cl, k)
		}
	}
	sort.Slice(cl, func(i, j int) bool { return cl[i][1] < cl[j][1] || cl[i][1] == cl[j][1] && cl[i][2] < cl[j][2] })
	if len(cl) > 0 {
		fmt.Printf("mismatches by class (counted in the mismatches above), each with its shortest example\n")
		for _, k := range cl {
			fmt.Printf("%-76s %8s %10d  %s\n", k[1], "", report.classes[k], k[2])
			fmt.Printf("\t%s\n", strings.ReplaceAll(report.examples[k], "\n", "\n\t"))
		}
	}
	var ex [][3]string
	for k := range report.excluded {
		if k[0] == u.minor.dir {
			ex = append(ex, k)
		}
	}
	sort.Slice(ex, func(i, j int) bool { return ex[i][1] < ex[j][1] || ex[i][1] == ex[j][1] && ex[i][2] < ex[j][2] })
	if len(ex) > 0 {
		fmt.Printf("not compared (documented differences, README \"Faithfulness\"; pods the release's API server refuses)\n")
		for _, k := range ex {
			fmt.Printf("%-76s %8d  %s\n", k[1], report.excluded[k], k[2])
		}
	}
}

// upstream is one release's answering command (conformance/cmd/upstream as
// copied into conformance/versions/<minor>), running.
type upstream struct {
	minor minor
	info  response
	built time.Duration

	mu  sync.Mutex
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// start builds the command of mi into bin and starts it.
func start(mi minor, bin string) (*upstream, error) {
	exe := filepath.Join(bin, "upstream-"+mi.dir)
	build := exec.Command("go", "build", "-o", exe, ".")
	build.Dir = mi.dirOf()
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	began := time.Now()
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("go build in %s: %v", mi.dirOf(), err)
	}
	u := &upstream{minor: mi, built: time.Since(began), cmd: exec.Command(exe)}
	u.cmd.Stderr = os.Stderr
	var err error
	if u.in, err = u.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := u.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	u.out = bufio.NewReaderSize(out, 1<<20)
	if err := u.cmd.Start(); err != nil {
		return nil, err
	}
	if u.info, err = u.ask(&request{Op: "info"}); err != nil {
		u.stop()
		return nil, err
	}
	if want := mi.profile.Release(); u.info.Release != want {
		u.stop()
		return nil, fmt.Errorf("the command of %s answers for %s, profile %s is confirmed against %s", mi.dir, u.info.Release, mi.profile, want)
	}
	return u, nil
}

func (u *upstream) stop() {
	u.in.Close()
	u.cmd.Wait()
}

// ask sends one request and reads its response.
func (u *upstream) ask(req *request) (response, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	data, err := json.Marshal(req)
	if err != nil {
		return response{}, err
	}
	if _, err := u.in.Write(append(data, '\n')); err != nil {
		return response{}, err
	}
	line, err := u.out.ReadBytes('\n')
	if err != nil {
		return response{}, fmt.Errorf("reading the answer of %s: %v", u.minor.dir, err)
	}
	var resp response
	if err := json.Unmarshal(line, &resp); err != nil {
		return response{}, fmt.Errorf("decoding the answer of %s: %v", u.minor.dir, err)
	}
	if resp.Error != "" {
		return resp, fmt.Errorf("%s: %s", u.minor.dir, resp.Error)
	}
	return resp, nil
}
