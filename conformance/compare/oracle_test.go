package compare

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nodestate/nodestate/kube"
)

// ciGenerated is how many generated pods every CI run compares, and
// ciSeed the first one's seed: a fixed seed, so that a difference found in
// CI is found again by make oracle -seed.
const (
	ciGenerated = 200
	ciSeed      = 1
	ciWave      = 100
)

// config returns the comparison's configuration from the environment make
// test sets (NODESTATE_CONTROL_PLANE, NODESTATE_ORACLE), skipping under
// -short and failing when it is not set.
func config(t *testing.T) Config {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no control plane, no oracle node")
	}
	cp, oracle := os.Getenv("NODESTATE_CONTROL_PLANE"), os.Getenv("NODESTATE_ORACLE")
	if cp == "" || oracle == "" {
		t.Fatal(`NODESTATE_CONTROL_PLANE and NODESTATE_ORACLE are not set: run make test, or export them from kube/hack/build-control-plane.sh and kube/hack/build-oracle.sh`)
	}
	return Config{BinDir: cp, Oracle: filepath.Join(oracle, "oraclenode"), Dir: t.TempDir(), Log: testWriter{t}}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// TestOracle runs the CI subset of the named workloads and 200 generated
// pods on the real kubelet and on kube.Node, and each a third time on a
// second oracle node (the baseline). It fails on any difference in the Node
// objects not documented in docs/faithfulness.md, on a generated pod that
// could not be created or paired, when more of the generated pods than
// maxGeneratedDiffering differ in a way the baseline does not explain
// (docs/faithfulness.md, "Generated pods": their differences are not all
// classified yet; the share is held so that a change that makes more of
// them differ fails), and on a named workload that differs in a way
// neither documented nor explained by the baseline in the run and again in
// each of namedReruns runs of it alone (a difference that the kubelet's
// timing makes come and go passes once a rerun shows the workload equal or
// explained; one that nodestate makes every time fails).
func TestOracle(t *testing.T) {
	cfg := config(t)
	var ws []Workload
	for _, w := range Workloads() {
		if w.CI {
			ws = append(ws, w)
		}
	}
	ws = append(ws, Waves(Generated(ciSeed, ciGenerated), ciWave, GeneratedFor)...)
	cfg.MaxPods = 2 * len(ws)
	cfg.Baseline = true
	rep := run(t, cfg, ws, 15*time.Minute)
	t.Logf("\n%s", rep)
	var named []Workload
	generated, differing := 0, 0
	for i := range rep.Workloads {
		w := &rep.Workloads[i]
		if !strings.HasPrefix(w.Name, "gen-") {
			if !w.Explained() {
				named = append(named, ws[slices.IndexFunc(ws, func(x Workload) bool { return x.Name == w.Name })])
			}
			continue
		}
		generated++
		if len(w.Errors) > 0 || len(w.Unpaired) > 0 {
			t.Errorf("generated %s: %v %v", w.Name, w.Errors, w.Unpaired)
		}
		if !w.Explained() {
			differing++
		}
	}
	if len(rep.Node.Differences) > 0 {
		t.Errorf("%d Node fields differ from the kubelet without a documented reason (the report above)", len(rep.Node.Differences))
	}
	if share := float64(differing) / float64(max(generated, 1)); share > maxGeneratedDiffering {
		t.Errorf("%d of %d generated pods differ from the kubelet (%.0f%%), more than the %.0f%% held", differing, generated, 100*share, 100*maxGeneratedDiffering)
	}
	if len(named) == 0 {
		return
	}
	// The named workloads that differ run again on their own; the
	// generated ones do not here (make oracle reruns them too), to keep
	// the test's time.
	cfg.Dir = t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(namedReruns)*5*time.Minute)
	defer cancel()
	if err := Confirm(ctx, cfg, rep, named, namedReruns, DefaultTolerances(), Documented()); err != nil {
		t.Fatal(err)
	}
	var still []string
	for i := range rep.Workloads {
		if w := &rep.Workloads[i]; w.Rerun != nil {
			t.Logf("%s:\n%s", w.Name, w.Rerun)
			if w.Rerun.Reproduced {
				still = append(still, w.Name)
			}
		}
	}
	if len(still) > 0 {
		t.Errorf("named workloads differ from the kubelet without a documented reason, in the run and in %d runs of their own: %s (the report above)", namedReruns, strings.Join(still, ", "))
	}
}

// namedReruns is how many times TestOracle runs a named workload alone
// again before it calls its difference nodestate's.
const namedReruns = 2

// run runs ws with the documented differences and the default tolerances,
// failing the test when the comparison cannot run.
func run(t *testing.T, cfg Config, ws []Workload, limit time.Duration) *Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	rep, err := Run(ctx, cfg, ws, DefaultTolerances(), Documented())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// maxGeneratedDiffering is the share of generated pods that may still show
// a difference neither documented nor explained by the baseline (measured
// on a quiet machine: 18.5% and 17% of 200, the latter after the fixes of
// the second run; docs/faithfulness.md lists the classes).
const maxGeneratedDiffering = 0.25

// TestOracleBreak is the break check: a nodestate node made wrong on
// purpose (container statuses without allocatedResources and resources,
// which the kubelet writes, as with InPlacePodVerticalScaling off) makes
// the comparison report the difference.
func TestOracleBreak(t *testing.T) {
	cfg := config(t)
	cfg.MaxPods = 110
	cfg.Nodestate = func(o *kube.Options) { o.Lifecycle.Features.InPlacePodVerticalScaling = false }
	var ws []Workload
	for _, w := range Workloads() {
		if w.Name == "guaranteed" {
			w.For = 20 * time.Second
			ws = append(ws, w)
		}
	}
	rep := run(t, cfg, ws, 5*time.Minute)
	if !strings.Contains(rep.String(), "allocatedResources") {
		t.Fatalf("the comparison did not report the missing allocatedResources:\n%s", rep)
	}
	if rep.Differences() == 0 {
		t.Fatalf("the comparison found no difference:\n%s", rep)
	}
}
