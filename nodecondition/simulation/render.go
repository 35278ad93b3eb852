package simulation

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"
)

// FormatOffset renders a scenario time the way the tables show it ("55s", "5m55s").
func FormatOffset(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	return d.String()
}

func (e Entry) what() string {
	switch e.Kind {
	case KindCondition:
		return e.Subject + " " + e.From + " -> " + e.To
	case KindZone:
		return "zone " + e.Subject + " " + e.From + " -> " + e.To
	case KindKubelet:
		return "kubelet " + e.To
	default:
		return e.Kind.String() + " " + e.Subject
	}
}

// String renders an entry on one line.
func (e Entry) String() string {
	s := FormatOffset(e.At) + " "
	if e.Node != "" {
		s += e.Node + " "
	}
	s += e.what()
	if e.Detail != "" {
		s += " " + e.Detail
	}
	if w := e.window(); w != "" {
		s += " [" + w + "]"
	}
	return s
}

// window renders Earliest..Latest, or "" when they are equal.
func (e Entry) window() string {
	if e.Earliest == e.Latest {
		return ""
	}
	return FormatOffset(e.Earliest) + ".." + FormatOffset(e.Latest)
}

// Table renders the timeline as an aligned text table with the columns
// TIME, NODE, EVENT and DETAIL, and a WINDOW column (earliest..latest across
// the monitor phases, empty when the time does not move) when the timeline
// has windows.
func (tl Timeline) Table() string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	if tl.Phases > 0 {
		fmt.Fprintln(w, "TIME\tWINDOW\tNODE\tEVENT\tDETAIL")
	} else {
		fmt.Fprintln(w, "TIME\tNODE\tEVENT\tDETAIL")
	}
	for _, e := range tl.Entries {
		node := e.Node
		if node == "" {
			node = "-"
		}
		if tl.Phases > 0 {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", FormatOffset(e.At), e.window(), node, e.what(), e.Detail)
			continue
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", FormatOffset(e.At), node, e.what(), e.Detail)
	}
	w.Flush()
	lines := strings.SplitAfter(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(strings.TrimSuffix(l, "\n"), " ")
		if strings.HasSuffix(l, "\n") {
			lines[i] += "\n"
		}
	}
	return strings.Join(lines, "")
}

// mermaidText keeps an event text inside one Mermaid timeline event: the
// colon separates events and "#" starts an entity there.
func mermaidText(s string) string {
	return strings.NewReplacer(":", " ", "#", "", ";", ",", "\n", " ").Replace(s)
}

// Mermaid renders the timeline as a Mermaid "timeline" diagram: one period
// per instant, one event per entry (each on its own line), in time order.
func (tl Timeline) Mermaid() string {
	var b strings.Builder
	b.WriteString("timeline\n")
	if tl.Scenario != "" {
		b.WriteString("    title " + mermaidText(tl.Scenario) + "\n")
	}
	for i := 0; i < len(tl.Entries); {
		j := i
		period := "    " + FormatOffset(tl.Entries[i].At)
		for ; j < len(tl.Entries) && tl.Entries[j].At == tl.Entries[i].At; j++ {
			e := tl.Entries[j]
			text := e.what()
			if e.Node != "" {
				text = e.Node + " " + text
			}
			if j == i {
				b.WriteString(period + " : " + mermaidText(text) + "\n")
			} else {
				b.WriteString(strings.Repeat(" ", len(period)) + " : " + mermaidText(text) + "\n")
			}
		}
		i = j
	}
	return b.String()
}
