// Command oraclecompare runs the oracle comparison (package compare): the
// named workloads and generated pods on the real kubelet and on a nodestate
// kube.Node, one control plane, and prints the report. It exits 1 when the
// report has an undocumented difference.
//
//	oraclecompare -control-plane DIR -oracle DIR [-ci] [-generated 200] [-seed 1] [-baseline=false] [-run REGEXP] [-save FILE]
//	oraclecompare -replay FILE [-dump REGEXP]
//
// make oracle builds both and runs every named workload and 200 generated
// pods, each a third time on a second oracle node (-baseline): a
// difference of nodestate's in a way the kubelet's own two runs differ too
// is reported as the kubelet's chance. -save keeps the recording (gzipped JSON), which -replay compares
// again without running anything.
package main

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/nodestate/nodestate/conformance/compare"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}

func run() error {
	cp := flag.String("control-plane", os.Getenv("NODESTATE_CONTROL_PLANE"), "the control plane's binaries (kube/hack/build-control-plane.sh prints the directory)")
	oracle := flag.String("oracle", os.Getenv("NODESTATE_ORACLE"), "the directory holding oraclenode (kube/hack/build-oracle.sh prints it)")
	ci := flag.Bool("ci", false, "only the named workloads of the CI subset")
	generated := flag.Int("generated", 200, "generated pods")
	seed := flag.Int("seed", 1, "the first generated pod's seed")
	wave := flag.Int("wave", 100, "generated pods created at once: each wave is created when the one before ends")
	baseline := flag.Bool("baseline", true, "run every workload on a second oracle node too, to tell the kubelet's own variation from nodestate's differences")
	only := flag.String("run", "", "only the named workloads matching this regular expression")
	dumpRE := flag.String("dump", "", "print every status of the workloads matching this regular expression in full")
	save := flag.String("save", "", "write the recording to this file (gzipped JSON)")
	keep := flag.Bool("keep", false, "keep the work directory (the control plane's and the oracle nodes' logs) and print its path")
	replay := flag.String("replay", "", "compare the recording in this file instead of running")
	reruns := flag.Int("reruns", 2, "run each workload that differs without a documented or baseline reason again on its own, up to this many times: one a rerun shows equal or explained is counted as not reproduced (timing)")
	flag.Parse()
	var dump func(string) bool
	if *dumpRE != "" {
		d, err := regexp.Compile(*dumpRE)
		if err != nil {
			return fmt.Errorf("oraclecompare: -dump: %w", err)
		}
		dump = d.MatchString
	}
	if *replay != "" {
		rec, err := load(*replay)
		if err != nil {
			return err
		}
		return report(compare.Compare(rec, compare.DefaultTolerances(), compare.Documented(), dump))
	}
	if *cp == "" || *oracle == "" {
		return fmt.Errorf("oraclecompare: -control-plane and -oracle (or NODESTATE_CONTROL_PLANE and NODESTATE_ORACLE) are required")
	}
	re, err := regexp.Compile(*only)
	if err != nil {
		return fmt.Errorf("oraclecompare: -run: %w", err)
	}
	var ws []compare.Workload
	for _, w := range compare.Workloads() {
		if (!*ci || w.CI) && re.MatchString(w.Name) {
			ws = append(ws, w)
		}
	}
	ws = append(ws, compare.Waves(compare.Generated(*seed, *generated), *wave, compare.GeneratedFor)...)
	dir, err := os.MkdirTemp("", "oraclecompare-")
	if err != nil {
		return err
	}
	if *keep {
		fmt.Fprintf(os.Stderr, "compare: the work directory (logs): %s\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	cfg := compare.Config{BinDir: *cp, Oracle: filepath.Join(*oracle, "oraclenode"), Dir: dir, MaxPods: max(110, 2*len(ws)), Log: os.Stderr, Baseline: *baseline}
	rec, err := compare.Record(context.Background(), cfg, ws)
	if err != nil {
		return err
	}
	if *save != "" {
		if err := store(*save, rec); err != nil {
			return err
		}
	}
	rep := compare.Compare(rec, compare.DefaultTolerances(), compare.Documented(), dump)
	if *reruns > 0 && rep.Differences() > 0 {
		if err := compare.Confirm(context.Background(), cfg, rep, ws, *reruns, compare.DefaultTolerances(), compare.Documented()); err != nil {
			return err
		}
	}
	return report(rep)
}

// report prints rep and exits 1 when it has an undocumented difference.
func report(rep *compare.Report) error {
	fmt.Print(rep)
	if rep.Differences() > 0 {
		os.Exit(1)
	}
	return nil
}

func store(path string, rec *compare.Recording) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	zw := gzip.NewWriter(f)
	if err := json.NewEncoder(zw).Encode(rec); err != nil {
		f.Close()
		return fmt.Errorf("oraclecompare: writing %s: %w", path, err)
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func load(path string) (*compare.Recording, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("oraclecompare: %s: %w", path, err)
	}
	var rec compare.Recording
	if err := json.NewDecoder(zr).Decode(&rec); err != nil {
		return nil, fmt.Errorf("oraclecompare: reading %s: %w", path, err)
	}
	return &rec, nil
}
