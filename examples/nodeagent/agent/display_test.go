package agent_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nodestate/nodestate/examples/nodeagent/agent"
	"github.com/nodestate/nodestate/examples/nodeagent/agent/agenttest"
	"github.com/nodestate/nodestate/podphase"
)

// TestStatusColumnOverTime follows the STATUS column `kubectl get pods` shows for each kind of
// pod while the agent runs, as the API server holds it after every step, and checks that it goes
// through the kubelet's states in order (each row's want is a subsequence of what was seen,
// consecutive repeats folded).
func TestStatusColumnOverTime(t *testing.T) {
	seen := map[string][]string{}
	stepwise(t, agent.Options{Seed: 4}, 6*time.Minute, func(_ time.Time, sim *agenttest.Sim) {
		for _, p := range sim.Pods() {
			prefix, _, _ := strings.Cut(p.Name, "-")
			s := podphase.DisplayStatus(p)
			if l := seen[prefix]; len(l) == 0 || l[len(l)-1] != s {
				seen[prefix] = append(l, s)
			}
		}
	})
	for _, tc := range []struct {
		prefix string
		want   []string
		reason string
	}{
		{"worker", []string{"ContainerCreating", "Running", "Error", "Running", "Error", "CrashLoopBackOff"},
			"podlifecycle spec rule 4.5, as the real kubelet shows it: a crashed container shows Terminated/Error until its back-off's requeue, " +
				"and Waiting/CrashLoopBackOff (containerstate spec section 5; kubectl shows the waiting reason, podphase spec K02) once a back-off outlasts the 1 min resync"},
		{"cache", []string{"ContainerCreating", "ErrImagePull", "ImagePullBackOff", "ErrImagePull", "ImagePullBackOff"},
			"containerstate spec sections 5 and 11: a failed pull is ErrImagePull until the retry, which image-pull back-off turns into ImagePullBackOff"},
		{"report", []string{"Init:0/1", "PodInitializing", "Running", "Completed"},
			"podphase spec 9 and K17: a sidecar not yet started is Init:0/1; a Succeeded pod is Completed"},
		{"api", []string{"Init:0/1", "PodInitializing", "Running"},
			"podphase spec 9: an init container running is Init:0/1, then the regular container waits with PodInitializing"},
		{"db", []string{"Init:0/2", "Init:1/2", "PodInitializing", "Running"},
			"podphase spec 9 and K10: init containers one at a time, Init:N/M counts the completed ones"},
		{"web", []string{"ContainerCreating", "Running"},
			"containerstate spec 4.1: a container the runtime does not have yet is Waiting/ContainerCreating"},
	} {
		got := seen[tc.prefix]
		if !subsequence(tc.want, got) {
			t.Errorf("%s: STATUS went %q, want it to pass through %q (%s)", tc.prefix, got, tc.want, tc.reason)
		}
	}
}

// subsequence reports whether want appears in got in order, not necessarily contiguously.
func subsequence(want, got []string) bool {
	for _, w := range want {
		i := slices.Index(got, w)
		if i < 0 {
			return false
		}
		got = got[i+1:]
	}
	return true
}
