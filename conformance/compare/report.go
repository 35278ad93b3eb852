package compare

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Report is what a comparison found.
type Report struct {
	// Workloads are the workloads' reports, in the order they ran.
	Workloads []WorkloadReport
	// Node compares the two Node objects at the end.
	Node NodeReport
	// Tolerances are the comparison's.
	Tolerances Tolerances
	// Elapsed is the whole run, the control plane's start included.
	Elapsed time.Duration
	// OracleBefore and OracleAfter are the oracle node's resource usage
	// before the workloads started and at their end.
	OracleBefore, OracleAfter Usage
	// Baseline says that a second oracle node ran every workload too.
	Baseline bool
}

func (r *Report) explainedBy(how string) int {
	n := 0
	for i := range r.Workloads {
		if b := r.Workloads[i].Baseline; b != nil && b.Explained == how {
			n++
		}
	}
	return n
}

// WorkloadReport is one workload's comparison.
type WorkloadReport struct {
	Name, What string
	// Pods are the pods' comparisons, Unpaired the pods of one node
	// without a counterpart on the other.
	Pods     []PodReport
	Unpaired []string
	// Errors are what failed while creating it or running its steps.
	Errors []string
	// Baseline is its comparison with the second oracle node's run, when
	// it differs and the run had one (Config.Baseline).
	Baseline *BaselineReport
	// Rerun is what runs of its own showed, when it differed in a way
	// neither a documented difference nor the baseline explains and was
	// run again (Confirm).
	Rerun *Rerun
}

// Equal reports whether the workload ran alike on both nodes, but for
// documented differences.
func (w *WorkloadReport) Equal() bool {
	if len(w.Unpaired) > 0 || len(w.Errors) > 0 {
		return false
	}
	for i := range w.Pods {
		if !w.Pods[i].Equal() {
			return false
		}
	}
	return true
}

// Differences counts the undocumented differences: of statuses, events,
// pods without a counterpart, errors and the Node objects, but for those
// of the workloads the baseline explains (counted by Documented as
// "baseline").
func (r *Report) Differences() int {
	n := len(r.Node.Differences)
	for i := range r.Workloads {
		if w := &r.Workloads[i]; !w.Explained() {
			n += w.differences()
		}
	}
	return n
}

func (w *WorkloadReport) differences() int {
	n := len(w.Unpaired) + len(w.Errors)
	for _, p := range w.Pods {
		n += len(p.Statuses) + len(p.Events)
	}
	return n
}

// Documented counts the documented differences seen, by ID.
func (r *Report) Documented() map[string]int {
	out := map[string]int{}
	for id, n := range r.Node.Documented {
		out[id] += n
	}
	for i := range r.Workloads {
		w := &r.Workloads[i]
		for _, p := range w.Pods {
			for id, n := range p.Documented {
				out[id] += n
			}
		}
		switch {
		case w.Equal() || !w.Explained():
		case w.Baseline != nil && w.Baseline.Explained != "":
			out["baseline"] += w.differences()
		default:
			out["not reproduced"] += w.differences()
		}
	}
	return out
}

// String renders the report: a section per workload ("equal" or each
// difference), the Node comparison, and a summary.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "oracle comparison: the real kubelet v1.37.2 (%s) and kube.Node (%s), tolerances: %s per change, %s for a status one node alone shows, +%.0f%% of a jittered wait\n\n",
		KubeletNode, NodestateNode, r.Tolerances.Time, r.Tolerances.Transient, r.Tolerances.Jitter*100)
	equal, explained, pods := 0, 0, 0
	for i := range r.Workloads {
		w := &r.Workloads[i]
		pods += len(w.Pods)
		verdict := "differs"
		switch {
		case w.Equal():
			verdict, equal = "equal", equal+1
		case w.Baseline != nil && w.Baseline.Explained != "":
			verdict, explained = "differs as the kubelet's own runs do", explained+1
		case w.Explained():
			verdict = "differs, not again in a run of its own"
		}
		fmt.Fprintf(&b, "%s: %s (%s)\n", w.Name, verdict, w.What)
		for _, e := range w.Errors {
			b.WriteString("  error: " + e + "\n")
		}
		for _, u := range w.Unpaired {
			b.WriteString("  " + u + "\n")
		}
		for j := range w.Pods {
			b.WriteString(w.Pods[j].String())
		}
		if w.Baseline != nil {
			b.WriteString(w.Baseline.String())
		}
		if w.Rerun != nil {
			b.WriteString(w.Rerun.String())
		}
	}
	b.WriteString("\nNode objects: ")
	if len(r.Node.Differences) == 0 {
		b.WriteString("equal")
	}
	b.WriteString(documentedList(r.Node.Documented) + "\n")
	for _, d := range r.Node.Differences {
		b.WriteString("  " + d.String() + "\n")
	}
	fmt.Fprintf(&b, "\n%d of %d workloads equal, %d pod pairs, %d undocumented differences; documented:%s\n",
		equal, len(r.Workloads), pods, r.Differences(), documentedList(r.Documented()))
	if r.Baseline {
		fmt.Fprintf(&b, "baseline: %d differing workloads differ as the kubelet's own two runs do (%s: %d, %s: %d)\n",
			explained, ExplainedMatch, r.explainedBy(ExplainedMatch), ExplainedVaries, r.explainedBy(ExplainedVaries))
	}
	if rerun, not := r.notReproduced(); rerun > 0 {
		fmt.Fprintf(&b, "rerun: %d differing workloads ran again on their own: %d did not differ again (timing), %d differed each time\n",
			rerun, not, rerun-not)
	}
	fmt.Fprintf(&b, "run %s; oracle node: RSS %s before the workloads, %s at their end; CPU %s during them\n",
		r.Elapsed.Round(time.Second), mib(r.OracleBefore.RSS), mib(r.OracleAfter.RSS), (r.OracleAfter.CPU - r.OracleBefore.CPU).Round(10*time.Millisecond))
	return b.String()
}

func documentedList(m map[string]int) string {
	if len(m) == 0 {
		return " none"
	}
	var ids []string
	for id, n := range m {
		ids = append(ids, fmt.Sprintf("%s x%d", id, n))
	}
	sort.Strings(ids)
	return " " + strings.Join(ids, ", ")
}

func mib(b int64) string { return fmt.Sprintf("%.0f MB", float64(b)/(1<<20)) }

// Usage is a process's resident memory and CPU time so far.
type Usage struct {
	RSS int64
	CPU time.Duration
}

// usageOf reads process pid's usage from /proc (zero where it cannot).
func usageOf(pid int) Usage {
	var u Usage
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				u.RSS = kb << 10
			}
		}
	}
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i >= 0 {
			f := strings.Fields(s[i+1:])
			if len(f) > 12 {
				ut, _ := strconv.ParseInt(f[11], 10, 64)
				st, _ := strconv.ParseInt(f[12], 10, 64)
				u.CPU = time.Duration(ut+st) * (time.Second / 100)
			}
		}
	}
	return u
}
