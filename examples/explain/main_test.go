package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// TestGolden runs the program on each testdata/*.yaml and compares its
// output with the .golden file beside it.
func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no inputs: %v", err)
	}
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run([]string{in}, nil, &stdout, &stderr, now); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			golden := strings.TrimSuffix(in, ".yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, stdout.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if stdout.String() != string(want) {
				t.Errorf("output mismatch; got:\n%s\nwant:\n%s", stdout.String(), want)
			}
		})
	}
}

func TestStdinAndNowFlag(t *testing.T) {
	data, err := os.ReadFile("testdata/crashloop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-now", "2026-11-29T12:10:00Z"}, bytes.NewReader(data), &stdout, &stderr, now); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "RESTARTS 5 (12m ago)") {
		t.Errorf("-now not applied:\n%s", stdout.String())
	}
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  string
	}{
		{name: "empty", stdin: "  \n", want: "explain: empty input: want a pod as YAML or JSON\n"},
		{name: "not yaml", stdin: "{bad", want: "explain: input is not a pod in YAML or JSON:"},
		{name: "not a pod", stdin: "kind: Service\n", want: "explain: input is a Service, want a Pod\n"},
		{name: "no containers", stdin: "kind: Pod\nmetadata: {name: x}\n", want: "explain: input has no spec.containers: want a pod\n"},
		{name: "ghost status", stdin: `{"spec":{"containers":[{"name":"a"}]},"status":{"containerStatuses":[{"name":"b"}]}}`,
			want: `explain: podphase: status.containerStatuses has an entry for container "b" that the spec does not have` + "\n"},
		{name: "two files", args: []string{"a", "b"}, want: "explain: want at most one file, got 2 arguments\n"},
		{name: "missing file", args: []string{"testdata/nope.yaml"}, want: "explain: open testdata/nope.yaml:"},
		{name: "bad flag", args: []string{"-x"}, want: "explain: flag provided but not defined: -x (usage:"},
		{name: "bad now", args: []string{"-now", "noon"}, want: "explain: -now \"noon\" is not an RFC 3339 time\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tc.args, strings.NewReader(tc.stdin), &stdout, &stderr, now)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if !strings.HasPrefix(stderr.String(), tc.want) || strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("stderr = %q, want one line starting %q", stderr.String(), tc.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", stdout.String())
			}
		})
	}
}

// FuzzRun feeds arbitrary bytes to the program: it never panics, exits 0
// or 2, and reports an error on exactly one line.
func FuzzRun(f *testing.F) {
	for _, name := range []string{"testdata/crashloop.yaml", "testdata/init-failure.yaml", "testdata/sidecar-job.yaml"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("kind: Pod\nspec:\n  containers:\n  - name: a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var stdout, stderr bytes.Buffer
		switch code := run(nil, bytes.NewReader(data), &stdout, &stderr, now); code {
		case 0:
			if !strings.HasPrefix(stdout.String(), "pod ") {
				t.Fatalf("output %q", stdout.String())
			}
		case 2:
			if strings.Count(stderr.String(), "\n") != 1 {
				t.Fatalf("error not on one line: %q", stderr.String())
			}
		default:
			t.Fatalf("exit %d", code)
		}
	})
}

// TestKubernetesVersion: -kubernetes-version picks the minor's rules
// (docs/versions.md row PP-V5: kubectl before 1.35 keeps Completed over a
// failed container), and an unsupported minor is refused.
func TestKubernetesVersion(t *testing.T) {
	pod := `{"kind":"Pod","metadata":{"name":"job","namespace":"default"},
"spec":{"restartPolicy":"Never","containers":[{"name":"main"},{"name":"check"}]},
"status":{"phase":"Failed","containerStatuses":[
 {"name":"main","state":{"terminated":{"exitCode":0,"reason":"Completed"}}},
 {"name":"check","state":{"terminated":{"exitCode":1,"reason":"Error"}}}]}}`
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "STATUS Error "},
		{[]string{"-kubernetes-version", "1.37"}, "STATUS Error "},
		{[]string{"-kubernetes-version", "v1.34.4"}, "STATUS Completed "},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(tc.args, strings.NewReader(pod), &stdout, &stderr, now); code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, stderr.String())
		}
		if !strings.Contains(stdout.String(), tc.want) {
			t.Errorf("%v: output lacks %q:\n%s", tc.args, tc.want, stdout.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-kubernetes-version", "1.32"}, strings.NewReader(pod), &stdout, &stderr, now); code != 2 ||
		!strings.Contains(stderr.String(), `unsupported Kubernetes version "1.32"`) {
		t.Errorf("-kubernetes-version 1.32: exit %d, stderr %q; want 2 and the version refused", code, stderr.String())
	}
}
