package podlifecycletest_test

import (
	"flag"
	"os"
	"testing"
	"time"

	"github.com/nodestate/nodestate/internal/rapidcheck"
	"github.com/nodestate/nodestate/podlifecycle/podlifecycletest"
	"pgregory.net/rapid"
)

// modelPods is how many generated pods TestModel runs per CI run (rapid
// runs a fifth of it under -short).
const modelPods = 1000

func TestMain(m *testing.M) {
	flag.Parse()
	if err := rapidcheck.MinChecks(modelPods); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

// modelRun runs one case generated with gen and every check on its trace.
func modelRun(t *rapid.T, gen podlifecycletest.GenOptions) {
	tc := podlifecycletest.Cases(gen, 4*time.Minute).Draw(t, "case")
	opts := podlifecycletest.DefaultOptions()
	opts.Delete = tc.Delete
	tr, err := podlifecycletest.Run(tc.Pod, tc.Behaviours, opts)
	if err == nil {
		err = podlifecycletest.CheckAll(tr)
	}
	if err != nil {
		t.Logf("behaviours:\n%s", tc.Behaviours)
		t.Logf("trace:\n%s", tr)
		t.Fatal(err)
	}
}

// TestModel runs modelPods generated pods with generated behaviours and
// deletions through the machine and the simulated runtime to their end (or
// ten minutes of virtual time) and checks every invariant of Checks on
// each trace.
func TestModel(t *testing.T) {
	t.Logf("%d generated pods", rapidcheck.Checks())
	rapid.Check(t, func(t *rapid.T) { modelRun(t, podlifecycletest.DefaultGenOptions()) })
}

// TestModelRestartAll is TestModel with restart rules whose action is
// RestartAllContainers.
func TestModelRestartAll(t *testing.T) {
	gen := podlifecycletest.DefaultGenOptions()
	gen.RestartAllRules = true
	rapid.Check(t, func(t *rapid.T) { modelRun(t, gen) })
}

// TestModelResources is TestModel with container requests, limits and
// volume mounts and pod-level resources, for CheckStatusFields.
func TestModelResources(t *testing.T) {
	gen := podlifecycletest.DefaultGenOptions()
	gen.Resources = true
	rapid.Check(t, func(t *rapid.T) { modelRun(t, gen) })
}
