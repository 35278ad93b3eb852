package compare

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Rerun is what runs of their own showed of a workload that differed in a
// way neither a documented difference nor the baseline explains.
type Rerun struct {
	// Runs is how many runs of its own it had.
	Runs int
	// Reproduced reports whether it differed so in each of them: a
	// difference nodestate makes every time. One a run of its own does not
	// show again came from the timing of that run: the kubelet's lag in a
	// wave of pods, the jitter both nodes draw for their requeues and the
	// phase of the kubelet's probe workers, which a deletion or a deadline
	// can meet on either side (docs/faithfulness.md, "Generated pods").
	Reproduced bool
	// Last is its comparison in the last run of its own.
	Last *WorkloadReport
}

// Confirm runs the workloads of rep that differ in a way neither a
// documented difference nor the baseline explains again, all at once on a
// control plane of their own, up to n times, and records in each one's
// Rerun whether it differed so in every run: a workload a run shows equal
// or explained runs no more. ws are the workloads rep compared; each run
// gets a directory of its own under cfg.Dir.
func Confirm(ctx context.Context, cfg Config, rep *Report, ws []Workload, n int, tol Tolerances, known []Known) error {
	dir := cfg.Dir
	return confirm(rep, ws, n, func(run int, again []Workload) (*Report, error) {
		cfg.Dir = filepath.Join(dir, fmt.Sprintf("rerun-%d", run))
		if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
			return nil, err
		}
		cfg.MaxPods = max(110, 2*len(again))
		cfg.logf("rerun %d of %d: %d workloads that differed, in a run of their own", run, n, len(again))
		return Run(ctx, cfg, again, tol, known)
	})
}

// confirm is Confirm with the runs made by run.
func confirm(rep *Report, ws []Workload, n int, run func(int, []Workload) (*Report, error)) error {
	if rep == nil {
		return errors.New("compare: Confirm needs a report")
	}
	byName := make(map[string]Workload, len(ws))
	for _, w := range ws {
		byName[w.Name] = w
	}
	reports := map[string]*WorkloadReport{}
	var names []string
	for i := range rep.Workloads {
		w := &rep.Workloads[i]
		if _, ok := byName[w.Name]; ok && !w.Explained() {
			w.Rerun = &Rerun{Reproduced: true}
			reports[w.Name] = w
			names = append(names, w.Name)
		}
	}
	for k := 1; k <= n && len(names) > 0; k++ {
		again := make([]Workload, 0, len(names))
		for _, name := range names {
			w := byName[name]
			w.Start = 0
			again = append(again, w)
		}
		r, err := run(k, again)
		if err != nil {
			return err
		}
		names = names[:0]
		for i := range r.Workloads {
			w := &r.Workloads[i]
			orig := reports[w.Name]
			if orig == nil {
				continue
			}
			orig.Rerun.Runs, orig.Rerun.Last = k, w
			if w.Explained() {
				orig.Rerun.Reproduced = false
				continue
			}
			names = append(names, w.Name)
		}
	}
	return nil
}

// String renders a rerun's verdict.
func (r *Rerun) String() string {
	if r == nil {
		return ""
	}
	if r.Reproduced {
		s := fmt.Sprintf("  rerun: differed again in each of %d runs of its own; in the last:\n", r.Runs)
		if r.Last != nil {
			for i := range r.Last.Pods {
				s += r.Last.Pods[i].String()
			}
		}
		return s
	}
	return fmt.Sprintf("  rerun: did not differ again in run %d of its own (timing: not reproduced)\n", r.Runs)
}

// notReproduced counts the workloads a rerun showed equal or explained.
func (r *Report) notReproduced() (rerun, not int) {
	for i := range r.Workloads {
		if rr := r.Workloads[i].Rerun; rr != nil {
			rerun++
			if !rr.Reproduced {
				not++
			}
		}
	}
	return rerun, not
}
