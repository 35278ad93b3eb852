package events_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/nodestate/nodestate/events"
)

var update = flag.Bool("update", false, "rewrite the golden traces in testdata")

// TestCorrelatorTrace replays a kubelet-like story through the default correlator and compares
// the rendering of every result with testdata/correlator.trace (rewrite it with -update): a
// container crash-looping (repeats, then the spam filter, then a refill), an image that keeps
// failing with a new message each time (aggregation after the ninth), and a second object that
// the first one's spam does not touch.
func TestCorrelatorTrace(t *testing.T) {
	c := mustCorrelator(t, events.DefaultCorrelatorOptions())
	web := podRef("web-0", "0f5c", "spec.containers{app}")
	db := podRef("db-0", "77aa", "")
	type in struct {
		at       time.Duration
		ref      v1.ObjectReference
		typ, rsn string
		msg      string
	}
	var script []in
	for i := range 27 {
		script = append(script, in{time.Duration(i) * 10 * time.Second, web, v1.EventTypeWarning, "BackOff", "Back-off restarting failed container app"})
	}
	script = append(script, in{270*time.Second + 300*time.Second, web, v1.EventTypeWarning, "BackOff", "Back-off restarting failed container app"})
	for i := range 11 {
		script = append(script, in{600*time.Second + time.Duration(i)*time.Second, db, v1.EventTypeWarning, "Failed", fmt.Sprintf("Failed to pull image \"db:%d\": not found", i)})
	}
	script = append(script, in{620 * time.Second, db, v1.EventTypeNormal, "Pulled", "Successfully pulled image \"db:11\""})
	var out strings.Builder
	for i, s := range script {
		now := t0.Add(s.at)
		res, err := c.Correlate(newEvent(s.ref, s.typ, s.rsn, s.msg, now), now)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "%02d +%4.0fs %s %s %s %q -> %s\n", i, s.at.Seconds(), s.ref.Name, s.typ, s.rsn, s.msg, res)
		if res.Event != nil {
			c.UpdateState(res.Event)
		}
	}
	fmt.Fprintf(&out, "stats %+v\n", c.Stats())
	golden := filepath.Join("testdata", "correlator.trace")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), out.String()); diff != "" {
		t.Errorf("trace mismatch (-want +got):\n%s", diff)
	}
}
