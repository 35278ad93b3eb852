package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func output(t testing.TB, args ...string) string {
	t.Helper()
	var b strings.Builder
	if err := run(context.Background(), args, &b); err != nil {
		t.Fatalf("run %q: %v", args, err)
	}
	return b.String()
}

// TestGolden checks the default run, the README's main command, against testdata; -update
// rewrites it.
func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		file string
		args []string
	}{
		{"default.golden", nil},
		{"noget.golden", []string{"-noget", "-pods", "3", "-duration", "2m", "-describe", "report-"}},
	} {
		got := output(t, tc.args...)
		path := filepath.Join("testdata", tc.file)
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), got); diff != "" {
			t.Errorf("%s mismatch (-want +got):\n%s", tc.file, diff)
		}
	}
}

func TestOutputSections(t *testing.T) {
	got := output(t)
	for _, want := range []string{
		"NAME                      READY     STATUS             RESTARTS ", // the RESTARTS column's width follows its widest cell
		"CrashLoopBackOff", "ImagePullBackOff", "Completed", "Running",
		"$ kubectl describe pod worker-",
		"Events:\n  Type     Reason   Age",
		"Warning  BackOff", "Back-off restarting failed container worker in pod worker-",
		"Summary (10m0s of virtual time):",
		"pod statuses", "status API requests  get ", "aggregated", "dropped", "Ready=True", "lease renewals",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

func TestSeedDecidesOutput(t *testing.T) {
	a := output(t, "-seed", "42", "-duration", "3m")
	b := output(t, "-seed", "42", "-duration", "3m")
	if a != b {
		t.Errorf("two runs with seed 42 differ:\n%s", cmp.Diff(a, b))
	}
	if c := output(t, "-seed", "43", "-duration", "3m"); c == a {
		t.Error("seeds 42 and 43 printed the same output")
	}
}

func TestFlagsRefused(t *testing.T) {
	for _, args := range [][]string{
		{"-pods", "0"}, {"-pods", "1001"}, {"-duration", "0s"}, {"-duration", "25h"},
		{"-seed", "-1"}, {"extra"}, {"-unknown"}, {"-describe", "nosuchpod"},
	} {
		var b strings.Builder
		if err := run(context.Background(), args, &b); err == nil {
			t.Errorf("run %q succeeded, want an error", args)
		}
	}
}

// TestDefaultRunIsFast bounds the wall time of the default run: the issue asks for well under
// 30 s on a fresh clone; virtual time makes it a fraction of a second.
func TestDefaultRunIsFast(t *testing.T) {
	start := time.Now()
	output(t)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the default run took %v", d)
	}
}

func BenchmarkDefaultRun(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		output(b)
	}
}
