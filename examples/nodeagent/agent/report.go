package agent

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nodestate/nodestate/podphase"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/duration"
)

// age is kubectl's rendering of the time since t.
func age(t, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t))
}

// WriteTable writes pods as `kubectl get pods` shows them (NAME, READY, STATUS, RESTARTS, AGE),
// sorted by name, with ages measured at now; READY, STATUS and RESTARTS are podphase.Columns.
func WriteTable(w io.Writer, pods []*v1.Pod, now time.Time) error {
	sorted := slices.Clone(pods)
	slices.SortFunc(sorted, func(a, b *v1.Pod) int { return cmp.Compare(a.Name, b.Name) })
	tw := tabwriter.NewWriter(w, 10, 4, 3, ' ', 0)
	fmt.Fprintln(tw, "NAME\tREADY\tSTATUS\tRESTARTS\tAGE")
	for _, p := range sorted {
		row, err := podphase.Columns(p, now)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Name, row.Ready, row.Status, row.Restarts, age(p.CreationTimestamp.Time, now))
	}
	return tw.Flush()
}

// EventsFor returns the events about the object with uid, in the order `kubectl describe` lists
// them: by last timestamp, then first timestamp, then name.
func EventsFor(all []v1.Event, uid types.UID) []v1.Event {
	var out []v1.Event
	for _, e := range all {
		if e.InvolvedObject.UID == uid {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b v1.Event) int {
		return cmp.Or(a.LastTimestamp.Compare(b.LastTimestamp.Time), a.FirstTimestamp.Compare(b.FirstTimestamp.Time), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// WriteEvents writes evs as the "Events:" section of `kubectl describe`: TYPE, REASON, AGE (with
// "(xN over ...)" for repeated events), FROM and MESSAGE prefixed by the container's field path,
// with ages measured at now. evs are written in the order given (see EventsFor).
func WriteEvents(w io.Writer, evs []v1.Event, now time.Time) error {
	if len(evs) == 0 {
		_, err := fmt.Fprintln(w, "Events:  <none>")
		return err
	}
	fmt.Fprintln(w, "Events:")
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  Type\tReason\tAge\tFrom\tMessage")
	fmt.Fprintln(tw, "  ----\t------\t----\t----\t-------")
	for _, e := range evs {
		when := age(e.LastTimestamp.Time, now)
		if e.Count > 1 {
			when = fmt.Sprintf("%s (x%d over %s)", when, e.Count, age(e.FirstTimestamp.Time, now))
		}
		from := e.Source.Component
		if from == "" {
			from = e.ReportingController
		}
		msg := strings.TrimSpace(e.Message)
		if e.InvolvedObject.FieldPath != "" {
			msg = e.InvolvedObject.FieldPath + ": " + msg
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", e.Type, e.Reason, when, from, msg)
	}
	return tw.Flush()
}

// WriteSummary writes what the agent did over a run of d.
func WriteSummary(w io.Writer, s Stats, d time.Duration) error {
	verbs := make([]string, 0, len(s.Requests))
	for v := range s.Requests {
		verbs = append(verbs, v)
	}
	slices.Sort(verbs)
	var req []string
	total := 0
	for _, v := range verbs {
		req = append(req, fmt.Sprintf("%s %d", v, s.Requests[v]))
		total += s.Requests[v]
	}
	if len(req) == 0 {
		req = []string{"none"}
	}
	var conds []string
	for _, c := range s.NodeConditions {
		conds = append(conds, fmt.Sprintf("%s=%s", c.Type, c.Status))
	}
	if len(conds) == 0 {
		conds = []string{"none reported"}
	}
	perVersion := 0.0
	if s.Synced > 0 {
		perVersion = float64(total) / float64(s.Synced)
	}
	e := s.Events
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "Summary (%v of virtual time):\n", d)
	fmt.Fprintf(tw, "  pod statuses\t%d set, %d new versions, %d synced, %d coalesced\n", s.StatusesSet, s.Versions, s.Synced, s.Coalesced())
	fmt.Fprintf(tw, "  status API requests\t%s (%.2f per synced version), in %d sync passes (%d full)\n", strings.Join(req, ", "), perVersion, s.Passes, s.FullPasses)
	fmt.Fprintf(tw, "  other API writes\tpods created %d, node writes %d, lease renewals %d, failed %d\n", s.PodsCreated, s.NodeReports, s.LeaseRenewals, s.ClusterErrors)
	fmt.Fprintf(tw, "  events\t%d recorded: %d created, %d patched, %d aggregated, %d dropped (%d by the spam filter, %d failed writes), %d retries, %d pending\n",
		e.Recorded, e.Created, e.Patched, e.Aggregated, e.DroppedSpam+e.DroppedFailed(), e.DroppedSpam, e.DroppedFailed(), e.Retries, e.Pending)
	fmt.Fprintf(tw, "  node conditions\t%s\n", strings.Join(conds, " "))
	return tw.Flush()
}
