package explain

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"
)

// age renders the time since t the way kubectl's AGE column does; "<unknown>"
// for a zero t.
func age(t, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t))
}

// until renders how far t lies after now: "in 25s", or "25s ago" once past.
func until(t, now time.Time) string {
	if d := t.Sub(now); d > 0 {
		return "in " + duration.HumanDuration(d)
	}
	return duration.HumanDuration(now.Sub(t)) + " ago"
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func newTab(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }

// WriteText writes the report as aligned text for a terminal.
func (r PodReport) WriteText(w io.Writer) error {
	tw := newTab(w)
	fmt.Fprintf(tw, "Pod:\t%s/%s\n", r.Namespace, r.Name)
	fmt.Fprintf(tw, "Phase:\t%s (rule %s): %s\n", r.Phase, r.Rule, r.Reason)
	if len(r.DecidedBy) > 0 {
		fmt.Fprintf(tw, "Decided by:\t%s\n", strings.Join(r.DecidedBy, ", "))
	}
	if r.APIPhase != r.Phase {
		fmt.Fprintf(tw, "API phase:\t%s (the status the kubelet last wrote differs)\n", orNone(r.APIPhase))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = newTab(w)
	c := r.Columns
	fmt.Fprintln(tw, "READY\tSTATUS\tRESTARTS\tAGE\tIP\tNODE")
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.Ready, orNone(c.Status), c.Restarts, c.Age, orNone(c.IP), orNone(c.Node))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if err := writeConditions(w, r.Conditions, r.now, false); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if len(r.Waits) == 0 {
		fmt.Fprintln(w, "Waiting for: nothing")
	} else {
		fmt.Fprintln(w, "Waiting for:")
		for _, wt := range r.Waits {
			fmt.Fprintf(w, "  %s\n", wt.Detail)
			if wt.Estimate {
				fmt.Fprintf(w, "    next attempt %s, at %s (estimate: %s back-off from %s)\n",
					until(wt.NextAttempt, r.now), wt.NextAttempt.UTC().Format(time.RFC3339), wt.Delay, wt.Since.UTC().Format(time.RFC3339))
			}
		}
	}
	fmt.Fprintln(w)
	return writeEvents(w, r.Events, r.now)
}

func writeConditions(w io.Writer, cs []Condition, now time.Time, heartbeat bool) error {
	if len(cs) == 0 {
		fmt.Fprintln(w, "Conditions: <none>")
		return nil
	}
	fmt.Fprintln(w, "Conditions:")
	tw := newTab(w)
	if heartbeat {
		fmt.Fprintln(tw, "  TYPE\tSTATUS\tREASON\tSINCE\tHEARTBEAT\tMESSAGE")
	} else {
		fmt.Fprintln(tw, "  TYPE\tSTATUS\tREASON\tSINCE\tMESSAGE")
	}
	for _, c := range cs {
		if heartbeat {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", c.Type, c.Status, c.Reason, age(c.LastTransitionTime, now), age(c.LastHeartbeatTime, now), c.Message)
		} else {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", c.Type, c.Status, c.Reason, age(c.LastTransitionTime, now), c.Message)
		}
	}
	return tw.Flush()
}

func writeEvents(w io.Writer, es []Event, now time.Time) error {
	if len(es) == 0 {
		fmt.Fprintln(w, "Events: <none>")
		return nil
	}
	fmt.Fprintln(w, "Events (oldest first):")
	tw := newTab(w)
	fmt.Fprintln(tw, "  LAST SEEN\tTYPE\tREASON\tOBJECT\tMESSAGE")
	for _, e := range es {
		msg := e.Message
		if e.Count > 1 {
			msg = fmt.Sprintf("%s (x%d over %s)", msg, e.Count, age(e.FirstSeen, now))
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", age(e.LastSeen, now), e.Type, e.Reason, e.Object, msg)
	}
	return tw.Flush()
}

// WriteText writes the report as aligned text for a terminal.
func (r NodeReport) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "Node:    %s\n", r.Name)
	if l := r.Lease; l == nil {
		fmt.Fprintln(w, "Lease:   <none> (the node does not renew a Lease in kube-node-lease)")
	} else {
		fmt.Fprintf(w, "Lease:   renewed %s ago by %s (duration %ds)\n", l.Age, orNone(l.Holder), l.DurationSeconds)
	}
	fmt.Fprintf(w, "Pods:    %d\n\n", r.Pods)
	if err := writeConditions(w, r.Conditions, r.now, true); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if len(r.Taints) == 0 {
		fmt.Fprintln(w, "Taints: <none>")
	} else {
		fmt.Fprintln(w, "Taints:")
		tw := newTab(w)
		fmt.Fprintln(tw, "  KEY\tVALUE\tEFFECT\tSINCE")
		for _, t := range r.Taints {
			since := "<unknown>"
			if !t.TimeAdded.IsZero() {
				since = age(t.TimeAdded, r.now)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", t.Key, t.Value, t.Effect, since)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	p := r.Prediction
	fmt.Fprintf(w, "If %s stopped renewing its Lease now (simulated, an estimate; counted from its last renewal or heartbeat %s;\n", r.Name, until(p.From, r.now))
	fmt.Fprintf(w, "node-monitor-grace-period %s, node-monitor-period %s, node-eviction-rate %g; window over the monitor loop's phase):\n",
		p.GracePeriod, p.MonitorPeriod, p.EvictionRate)
	tw := newTab(w)
	fmt.Fprintln(tw, "  AFTER\tAT THE LATEST\tEVENT\tSUBJECT\tDETAIL")
	for _, s := range p.Steps {
		if s.Never {
			fmt.Fprintf(tw, "  never\t\t%s\t%s\t%s\n", s.Event, s.Subject, s.Detail)
			continue
		}
		after := s.Earliest
		if s.Latest != s.Earliest {
			after += ".." + s.Latest
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", after, until(s.AtLatest, r.now), s.Event, s.Subject, s.Detail)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range p.Notes {
		fmt.Fprintf(w, "Note: %s.\n", n)
	}
	return nil
}
