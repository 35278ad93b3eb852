// Command genversions writes the conformance suite's modules for the older
// Kubernetes minors (conformance/doc.go, "Older minors"); run it from the
// repository root:
//
//	go run ./internal/cmd/genversions          # write the files
//	go run ./internal/cmd/genversions -check   # fail when a file is stale
//
// For each minor before 1.37 it writes conformance/versions/v1.N/, the
// module of the upstream answering command for that release: main.go,
// lifecycle.go and kubeletfakes.go, copies of conformance/cmd/upstream's;
// version.go, a copy of
// that release's hand-written shim
// conformance/cmd/upstream/testdata/v1.N/version.go; and, when -tidy is
// given or the module has none yet, a go.mod that requires k8s.io/kubernetes
// at the release with its staging modules replaced by their published
// versions, completed with go.sum by `go mod tidy`. It also copies the input
// generators conformance/gen_test.go and conformance/cases_test.go, and the
// podlifecycle history conformance/lifecycle_history_test.go, into the
// driver module conformance/versions, which runs the properties against
// every release's command; and kubeletfakes.go into the suite itself, as
// conformance/zz_kubeletfakes_test.go, for its in-process harness of
// v1.37.2.
//
// -check regenerates the copies in memory and compares them with the files,
// and checks that each go.mod requires and replaces what it should; it runs
// no go command, so make lint stays cheap.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// release is one older minor: its directory under conformance/versions, the
// k8s.io/kubernetes release and the version of its staging modules.
type release struct {
	dir, kubernetes, staging string
	// extra are the staging modules of this release beyond [staging].
	extra []string
}

// releases are the reference releases of docs/versions.md.
var releases = []release{
	{"v1.33", "v1.33.13", "v0.33.13", nil},
	{"v1.34", "v1.34.4", "v0.34.4", nil},
	{"v1.35", "v1.35.4", "v0.35.4", nil},
	{"v1.36", "v1.36.3", "v0.36.3", []string{"cri-streaming", "streaming"}},
}

// staging are the staging modules k8s.io/kubernetes requires at v0.0.0 and
// replaces with its own tree; a module outside that tree must replace them
// with their published versions. Every one of the five releases has these
// (sample-cli-plugin and sample-controller, which no package the command
// builds needs, aside).
var staging = []string{
	"api", "apiextensions-apiserver", "apimachinery", "apiserver", "cli-runtime", "client-go",
	"cloud-provider", "cluster-bootstrap", "code-generator", "component-base", "component-helpers",
	"controller-manager", "cri-api", "cri-client", "csi-translation-lib", "dynamic-resource-allocation",
	"endpointslice", "externaljwt", "kms", "kube-aggregator", "kube-controller-manager", "kube-proxy",
	"kube-scheduler", "kubectl", "kubelet", "metrics", "mount-utils", "pod-security-admission",
	"sample-apiserver",
}

// aligned are the modules outside Kubernetes that the commands build and
// that each release's go.mod requires at the version conformance/go.mod
// selects, a newer one than the release's own. The Go build cache reuses a
// compiled package only when its whole dependency graph is the same, so on a
// cold machine these packages (grpc, protobuf, OpenTelemetry, Prometheus,
// golang.org/x, ...; a fifth of each command's source) compile once for the
// five releases instead of five times. They change no behaviour the suite
// compares: none of them decides a pod's state. Left at the release's own
// versions, because a newer one changes an API the release's code uses:
// cel-go, kube-openapi, gnostic-models, k8s.io/utils, cadvisor, the
// containerd API, opencontainers/cgroups, the etcd client and otelgrpc
// (v0.68 has no UnaryClientInterceptor, which 1.33's CRI client and
// apiserver use).
var aligned = []string{
	"cel.dev/expr",
	"github.com/antlr4-go/antlr/v4",
	"github.com/containerd/ttrpc",
	"github.com/coreos/go-systemd/v22",
	"github.com/cyphar/filepath-securejoin",
	"github.com/davecgh/go-spew",
	"github.com/emicklei/go-restful/v3",
	"github.com/fsnotify/fsnotify",
	"github.com/fxamacker/cbor/v2",
	"github.com/go-logr/logr",
	"github.com/go-openapi/jsonpointer",
	"github.com/go-openapi/jsonreference",
	"github.com/go-openapi/swag",
	"github.com/godbus/dbus/v5",
	"github.com/grpc-ecosystem/grpc-gateway/v2",
	"github.com/moby/spdystream",
	"github.com/modern-go/reflect2",
	"github.com/opencontainers/runtime-spec",
	"github.com/opencontainers/selinux",
	"github.com/pmezard/go-difflib",
	"github.com/prometheus/client_golang",
	"github.com/prometheus/client_model",
	"github.com/prometheus/common",
	"github.com/prometheus/procfs",
	"github.com/sirupsen/logrus",
	"github.com/spf13/cobra",
	"github.com/spf13/pflag",
	"github.com/stretchr/objx",
	"github.com/stretchr/testify",
	"go.opentelemetry.io/auto/sdk",
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp",
	"go.opentelemetry.io/otel",
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace",
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc",
	"go.opentelemetry.io/otel/metric",
	"go.opentelemetry.io/otel/sdk",
	"go.opentelemetry.io/otel/trace",
	"go.opentelemetry.io/proto/otlp",
	"go.uber.org/zap",
	"go.yaml.in/yaml/v2",
	"golang.org/x/crypto",
	"golang.org/x/exp",
	"golang.org/x/net",
	"golang.org/x/oauth2",
	"golang.org/x/sync",
	"golang.org/x/sys",
	"golang.org/x/term",
	"golang.org/x/text",
	"golang.org/x/time",
	"google.golang.org/genproto/googleapis/api",
	"google.golang.org/genproto/googleapis/rpc",
	"google.golang.org/grpc",
	"google.golang.org/protobuf",
	"gopkg.in/evanphx/json-patch.v4",
	"k8s.io/klog/v2",
	"sigs.k8s.io/apiserver-network-proxy/konnectivity-client",
	"sigs.k8s.io/json",
	"sigs.k8s.io/structured-merge-diff/v6",
	"sigs.k8s.io/yaml",
}

const (
	source   = "conformance/cmd/upstream"
	versions = "conformance/versions"
	// suiteMod is the go.mod whose versions the aligned modules follow.
	suiteMod = "conformance/go.mod"
)

func main() {
	check := flag.Bool("check", false, "compare instead of writing; exit 1 when a file is stale")
	tidy := flag.Bool("tidy", false, "rewrite every go.mod and run go mod tidy")
	flag.Parse()
	files, err := generated()
	if err != nil {
		fail(err)
	}
	suite, err := suiteVersions()
	if err != nil {
		fail(err)
	}
	stale := 0
	for _, f := range files {
		old, err := os.ReadFile(f.path)
		if err == nil && bytes.Equal(old, f.data) {
			continue
		}
		if *check {
			fmt.Fprintf(os.Stderr, "%s is stale\n", f.path)
			stale++
			continue
		}
		if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
			fail(err)
		}
		if err := os.WriteFile(f.path, f.data, 0o644); err != nil {
			fail(err)
		}
	}
	for _, r := range releases {
		gomod := filepath.Join(versions, r.dir, "go.mod")
		data, err := os.ReadFile(gomod)
		switch {
		case *check && err != nil:
			fmt.Fprintf(os.Stderr, "%s: %v\n", gomod, err)
			stale++
		case *check:
			for _, line := range modLines(r) {
				if !bytes.Contains(data, []byte(line)) {
					fmt.Fprintf(os.Stderr, "%s lacks %q\n", gomod, line)
					stale++
				}
			}
			for _, msg := range unaligned(data, suite) {
				fmt.Fprintf(os.Stderr, "%s: %s\n", gomod, msg)
				stale++
			}
		case *tidy || err != nil:
			if err := os.WriteFile(gomod, modFile(r, suite), 0o644); err != nil {
				fail(err)
			}
			cmd := exec.Command("go", "mod", "tidy")
			cmd.Dir = filepath.Dir(gomod)
			cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
			if err := cmd.Run(); err != nil {
				fail(fmt.Errorf("go mod tidy in %s: %v", cmd.Dir, err))
			}
		}
	}
	if stale > 0 {
		fmt.Fprintln(os.Stderr, "run go run ./internal/cmd/genversions")
		os.Exit(1)
	}
}

type file struct {
	path string
	data []byte
}

// generated returns every copied file with its content.
func generated() ([]file, error) {
	var files []file
	var shared []file
	for _, name := range []string{"main.go", "lifecycle.go", "kubeletfakes.go"} {
		data, err := copied(filepath.Join(source, name), "")
		if err != nil {
			return nil, err
		}
		shared = append(shared, file{name, data})
	}
	for _, r := range releases {
		shim, err := copied(filepath.Join(source, "testdata", r.dir, "version.go"), "")
		if err != nil {
			return nil, err
		}
		for _, f := range shared {
			files = append(files, file{filepath.Join(versions, r.dir, f.path), f.data})
		}
		files = append(files, file{filepath.Join(versions, r.dir, "version.go"), shim})
	}
	for _, name := range []string{"gen_test.go", "cases_test.go", "lifecycle_history_test.go"} {
		data, err := copied(filepath.Join("conformance", name), "versions")
		if err != nil {
			return nil, err
		}
		files = append(files, file{filepath.Join(versions, name), data})
	}
	// The suite's in-process harness of v1.37.2 builds its manager over the
	// same fakes as the commands.
	data, err := copied(filepath.Join(source, "kubeletfakes.go"), "conformance")
	if err != nil {
		return nil, err
	}
	files = append(files, file{filepath.Join("conformance", "zz_kubeletfakes_test.go"), data})
	return files, nil
}

// copied returns the file at path with the generated-code header and, when
// pkg is set, its package clause (whatever package it names) renamed to
// pkg.
func copied(path, pkg string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	text := string(data)
	if pkg != "" {
		// The package clause is the first line that starts with "package ".
		at := 0
		if !strings.HasPrefix(text, "package ") {
			at = strings.Index(text, "\npackage ") + 1
		}
		end := strings.IndexByte(text[at:], '\n')
		if !strings.HasPrefix(text[at:], "package ") || end < 0 {
			return nil, fmt.Errorf("%s: no package clause", path)
		}
		text = text[:at] + "package " + pkg + text[at+end:]
	}
	header := fmt.Sprintf("// Code generated by internal/cmd/genversions from %s. DO NOT EDIT.\n\n", filepath.ToSlash(path))
	return []byte(header + text), nil
}

// modLines are the lines a release's go.mod must hold.
func modLines(r release) []string {
	lines := []string{"module github.com/nodestate/nodestate/conformance/versions/" + r.dir + "\n",
		"\tk8s.io/kubernetes " + r.kubernetes + "\n"}
	for _, s := range append(append([]string(nil), staging...), r.extra...) {
		lines = append(lines, fmt.Sprintf("\tk8s.io/%s => k8s.io/%s %s\n", s, s, r.staging))
	}
	return lines
}

// modFile is the go.mod written before go mod tidy completes it: it
// requires the aligned modules at the suite's versions (suite maps module
// paths to versions), and go mod tidy drops those the release does not
// build.
func modFile(r release, suite map[string]string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "// Code generated by internal/cmd/genversions. DO NOT EDIT.\n\n")
	b.WriteString(modLines(r)[0])
	fmt.Fprintf(&b, "\ngo 1.26.0\n\nrequire (\n%s", modLines(r)[1])
	for _, m := range aligned {
		fmt.Fprintf(&b, "\t%s %s\n", m, suite[m])
	}
	b.WriteString(")\n\n")
	b.WriteString("// k8s.io/kubernetes points its staging modules at its own tree; pin them to\n// the release's published versions.\nreplace (\n")
	for _, l := range modLines(r)[2:] {
		b.WriteString(l)
	}
	b.WriteString(")\n")
	return []byte(b.String())
}

// requirements returns the module versions a go.mod requires.
func requirements(gomod []byte) map[string]string {
	req := map[string]string{}
	block := false
	for _, line := range strings.Split(string(gomod), "\n") {
		line = strings.TrimSpace(line)
		if i := strings.Index(line, "//"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		switch {
		case line == "require (":
			block = true
			continue
		case block && line == ")":
			block = false
			continue
		case strings.HasPrefix(line, "require "):
			line = strings.TrimPrefix(line, "require ")
		case !block:
			continue
		}
		if f := strings.Fields(line); len(f) == 2 {
			req[f[0]] = f[1]
		}
	}
	return req
}

// suiteVersions returns the versions conformance/go.mod requires, and fails
// when it lacks an aligned module.
func suiteVersions() (map[string]string, error) {
	data, err := os.ReadFile(suiteMod)
	if err != nil {
		return nil, err
	}
	suite := requirements(data)
	for _, m := range aligned {
		if suite[m] == "" {
			return nil, fmt.Errorf("%s does not require %s, which the older releases are aligned with", suiteMod, m)
		}
	}
	return suite, nil
}

// unaligned says which aligned modules a release's go.mod requires at
// another version than the suite.
func unaligned(gomod []byte, suite map[string]string) []string {
	req := requirements(gomod)
	var out []string
	for _, m := range aligned {
		if v, ok := req[m]; ok && v != suite[m] {
			out = append(out, fmt.Sprintf("requires %s %s; %s has %s", m, v, suiteMod, suite[m]))
		}
	}
	return out
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "genversions:", err)
	os.Exit(1)
}
