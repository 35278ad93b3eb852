package explain

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodestate/nodestate/containerstate"
	"github.com/nodestate/nodestate/podphase"
)

// ErrInvalidInput is returned for a nil pod or node.
var ErrInvalidInput = errors.New("explain: invalid input")

// PodReport explains one pod.
type PodReport struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Phase is the phase the kubelet's rules give for the pod's statuses;
	// APIPhase is what the API server holds (they differ while a status is
	// on its way).
	Phase    string `json:"phase"`
	APIPhase string `json:"apiPhase"`
	// Rule is the decision step that settled Phase, Reason says it in
	// words, and DecidedBy names the containers that decided.
	Rule      string   `json:"rule"`
	Reason    string   `json:"reason"`
	DecidedBy []string `json:"decidedBy,omitempty"`
	// Columns are what kubectl get pods shows.
	Columns Columns `json:"columns"`
	// Conditions are the pod's conditions as the API holds them.
	Conditions []Condition `json:"conditions,omitempty"`
	// Waits are what the pod waits for, most blocking first.
	Waits []Wait `json:"waits,omitempty"`
	// Events are the pod's events, oldest first.
	Events []Event `json:"events,omitempty"`

	now time.Time
}

// Columns are the columns of kubectl get pods -o wide.
type Columns struct {
	Ready    string `json:"ready"`
	Status   string `json:"status"`
	Restarts string `json:"restarts"`
	Age      string `json:"age"`
	IP       string `json:"ip"`
	Node     string `json:"node"`
}

// Condition is a pod or node condition.
type Condition struct {
	Type               string    `json:"type"`
	Status             string    `json:"status"`
	Reason             string    `json:"reason,omitempty"`
	Message            string    `json:"message,omitempty"`
	LastTransitionTime time.Time `json:"lastTransitionTime,omitzero"`
	LastHeartbeatTime  time.Time `json:"lastHeartbeatTime,omitzero"`
}

// Wait kinds.
const (
	WaitScheduling     = "Scheduling"
	WaitInitContainer  = "InitContainer"
	WaitSidecarStartup = "SidecarStartupProbe"
	WaitStartupProbe   = "StartupProbe"
	WaitCrashLoop      = "CrashLoopBackOff"
	WaitImagePull      = "ImagePullBackOff"
	WaitContainer      = "ContainerWaiting"
	WaitReadiness      = "ReadinessProbe"
)

// Wait is one thing the pod waits for.
type Wait struct {
	Kind      string `json:"kind"`
	Container string `json:"container,omitempty"`
	// Detail is one line a person reads.
	Detail string `json:"detail"`
	// Restarts is the container's restart count, for back-offs.
	Restarts int32 `json:"restarts,omitempty"`
	// Delay is the estimated back-off before the next attempt, counted
	// from Since (the last instance's finish, or the last failed pull).
	Delay string    `json:"delay,omitempty"`
	Since time.Time `json:"since,omitzero"`
	// NextAttempt is Since + Delay: an estimate, as the kubelet's back-off
	// state is not in the API.
	NextAttempt time.Time `json:"nextAttempt,omitzero"`
	Estimate    bool      `json:"estimate,omitempty"`
}

// Event is one event of the pod or node.
type Event struct {
	Type      string    `json:"type"`
	Reason    string    `json:"reason"`
	Object    string    `json:"object,omitempty"`
	Message   string    `json:"message"`
	Count     int32     `json:"count"`
	FirstSeen time.Time `json:"firstSeen,omitzero"`
	LastSeen  time.Time `json:"lastSeen,omitzero"`
}

// Pod explains pod at now from the pod and its events (any order).
func Pod(pod *corev1.Pod, events []corev1.Event, now time.Time) (PodReport, error) {
	if pod == nil {
		return PodReport{}, fmt.Errorf("%w: nil pod", ErrInvalidInput)
	}
	r := PodReport{Namespace: pod.Namespace, Name: pod.Name, APIPhase: string(pod.Status.Phase), now: now}
	ex, err := explainPhase(pod)
	if err != nil {
		return PodReport{}, err
	}
	r.Phase, r.Rule, r.Reason, r.DecidedBy = string(ex.Phase), ex.Rule.String(), ex.Reason, ex.Containers
	row, err := podphase.Columns(pod, now)
	if err != nil {
		return PodReport{}, err
	}
	r.Columns = Columns{Ready: row.Ready, Status: row.Status, Restarts: row.Restarts, Age: age(pod.CreationTimestamp.Time, now),
		IP: row.IP, Node: row.Node}
	for _, c := range pod.Status.Conditions {
		r.Conditions = append(r.Conditions, Condition{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason,
			Message: c.Message, LastTransitionTime: c.LastTransitionTime.Time})
	}
	r.Events = sortEvents(events)
	if !podphase.IsTerminal(pod.Status.Phase) && pod.DeletionTimestamp == nil {
		r.Waits = waits(pod, r.Events)
	}
	return r, nil
}

// explainPhase explains the pod's phase. A pod the API already has in a
// terminal phase is explained from its containers, as the kubelet decided it
// (a terminal phase never changes, which says nothing about why); when its
// containers give another phase (an eviction, a deletion) the terminal phase
// stands as it is.
func explainPhase(pod *corev1.Pod) (podphase.Explanation, error) {
	if podphase.IsTerminal(pod.Status.Phase) {
		cp := pod.DeepCopy()
		cp.Status.Phase = ""
		if ex, err := podphase.Explain(podphase.Input{Pod: cp}); err == nil && ex.Phase == pod.Status.Phase {
			return ex, nil
		}
	}
	return podphase.Explain(podphase.Input{Pod: pod, Terminal: podphase.IsTerminal(pod.Status.Phase)})
}

func waits(pod *corev1.Pod, events []Event) []Wait {
	var out []Wait
	if pod.Spec.NodeName == "" {
		d := "the scheduler has not bound the pod to a node"
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				d = fmt.Sprintf("not scheduled: %s", joinReason(c.Reason, c.Message))
			}
		}
		return append(out, Wait{Kind: WaitScheduling, Detail: d})
	}
	statuses := map[string]corev1.ContainerStatus{}
	for _, s := range pod.Status.InitContainerStatuses {
		statuses["init/"+s.Name] = s
	}
	for _, s := range pod.Status.ContainerStatuses {
		statuses[s.Name] = s
	}
	// Init containers run in order: the first not done holds the rest.
	for _, c := range pod.Spec.InitContainers {
		s, ok := statuses["init/"+c.Name]
		sidecar := c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		if sidecar {
			if ok && s.State.Running != nil && c.StartupProbe != nil && (s.Started == nil || !*s.Started) {
				out = append(out, Wait{Kind: WaitSidecarStartup, Container: c.Name,
					Detail: fmt.Sprintf("sidecar %q runs; its startup probe has not succeeded yet, so the next containers wait", c.Name)})
				return out
			}
			if ok && s.State.Running != nil {
				continue
			}
		} else if ok && s.State.Terminated != nil && s.State.Terminated.ExitCode == 0 {
			continue
		}
		if w, found := containerWait(pod, &c, s, ok, events); found {
			out = append(out, w)
		}
		what := "init container"
		if sidecar {
			what = "sidecar"
		}
		out = append(out, Wait{Kind: WaitInitContainer, Container: c.Name, Detail: fmt.Sprintf("%s %q is not done (%s); the containers after it wait", what, c.Name, stateOf(s, ok))})
		return out
	}
	for _, c := range pod.Spec.Containers {
		s, ok := statuses[c.Name]
		if w, found := containerWait(pod, &c, s, ok, events); found {
			out = append(out, w)
			continue
		}
		if !ok || s.State.Running == nil {
			continue
		}
		if c.StartupProbe != nil && (s.Started == nil || !*s.Started) {
			out = append(out, Wait{Kind: WaitStartupProbe, Container: c.Name, Detail: fmt.Sprintf("container %q runs; its startup probe has not succeeded yet", c.Name)})
		} else if !s.Ready {
			out = append(out, Wait{Kind: WaitReadiness, Container: c.Name, Detail: fmt.Sprintf("container %q runs but is not ready", c.Name)})
		}
	}
	return out
}

// containerWait reports a waiting container: a crash-loop or image-pull
// back-off with the estimated next attempt, or another waiting reason. A
// container that exited and will be restarted is in crash-loop back-off too:
// the kubelet shows it terminated until the sync that ends the back-off,
// which may be after the back-off itself for a delay under its 1 min resync
// (spec/podlifecycle.md rule 4.5).
func containerWait(pod *corev1.Pod, c *corev1.Container, s corev1.ContainerStatus, ok bool, events []Event) (Wait, bool) {
	name := c.Name
	if !ok {
		return Wait{}, false
	}
	live := pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
	if t := s.State.Terminated; live && t != nil && containerstate.ShouldRestart(&pod.Spec, c, t.ExitCode) {
		return crashLoopWait(name, s, t), true
	}
	if s.State.Waiting == nil {
		return Wait{}, false
	}
	w := s.State.Waiting
	switch w.Reason {
	case "CrashLoopBackOff":
		return crashLoopWait(name, s, s.LastTerminationState.Terminated), true
	case "ImagePullBackOff", "ErrImagePull":
		out := Wait{Kind: WaitImagePull, Container: name, Detail: fmt.Sprintf("container %q cannot pull its image: %s", name, joinReason(w.Reason, w.Message))}
		pulls, failed := pullHistory(name, events)
		if pulls > 0 && !failed.IsZero() {
			delay := imagePullDelay(pulls)
			out.Delay, out.Since, out.NextAttempt, out.Estimate = delay.String(), failed, failed.Add(delay), true
		}
		return out, true
	}
	return Wait{Kind: WaitContainer, Container: name, Detail: fmt.Sprintf("container %q is waiting: %s", name, joinReason(w.Reason, w.Message))}, true
}

// crashLoopWait is the crash-loop back-off of a container whose last
// instance ended as last.
func crashLoopWait(name string, s corev1.ContainerStatus, last *corev1.ContainerStateTerminated) Wait {
	out := Wait{Kind: WaitCrashLoop, Container: name, Restarts: s.RestartCount}
	if last == nil || last.FinishedAt.IsZero() {
		out.Detail = fmt.Sprintf("container %q is in crash-loop back-off after %d restarts; its last finish time is unknown", name, s.RestartCount)
		return out
	}
	delay := crashLoopDelay(s.RestartCount, last.StartedAt.Time, last.FinishedAt.Time)
	out.Delay, out.Since, out.NextAttempt, out.Estimate = delay.String(), last.FinishedAt.Time, last.FinishedAt.Add(delay), true
	out.Detail = fmt.Sprintf("container %q is in crash-loop back-off after %d restarts (last exit %s)", name, s.RestartCount, exitOf(last))
	return out
}

// crashLoopDelay replays the kubelet's crash-loop back-off for a container
// restarted restarts times: the first restart comes at once and each one
// after waits the doubled delay, capped, counted from the previous
// instance's finish. An instance that ran longer than the reset period
// starts the back-off over.
func crashLoopDelay(restarts int32, started, finished time.Time) time.Duration {
	opts, err := containerstate.DefaultCrashLoopOptions().BackoffOptions()
	if err != nil {
		return 0
	}
	if !started.IsZero() && finished.Sub(started) > opts.ResetAfter {
		return 0
	}
	return replay(opts, int(restarts))
}

// imagePullDelay is the image-pull back-off after pulls failed pulls.
func imagePullDelay(pulls int) time.Duration {
	return replay(containerstate.DefaultBackoffOptions(), pulls)
}

// replay records n failures in a fresh back-off and returns its delay.
func replay(opts containerstate.BackoffOptions, n int) time.Duration {
	b, err := containerstate.NewBackoff(opts)
	if err != nil {
		return 0
	}
	t := time.Unix(0, 0)
	for i := 0; i < n && i < 64; i++ {
		b.Next("c", t, t)
	}
	return b.Get("c")
}

// pullHistory counts the container's pull attempts in its events and the
// time of the last failed one.
func pullHistory(name string, events []Event) (pulls int, lastFailed time.Time) {
	for _, e := range events {
		if !strings.Contains(e.Object, "{"+name+"}") {
			continue
		}
		switch e.Reason {
		case "Pulling":
			pulls += int(max(e.Count, 1))
		case "Failed":
			if strings.Contains(e.Message, "pull") && e.LastSeen.After(lastFailed) {
				lastFailed = e.LastSeen
			}
		}
	}
	return pulls, lastFailed
}

func stateOf(s corev1.ContainerStatus, ok bool) string {
	switch {
	case !ok:
		return "no status yet"
	case s.State.Waiting != nil:
		return "waiting: " + orDefault(s.State.Waiting.Reason, "no reason")
	case s.State.Running != nil:
		return "running"
	case s.State.Terminated != nil:
		return "exited " + exitOf(s.State.Terminated)
	}
	return "no state"
}

func exitOf(t *corev1.ContainerStateTerminated) string {
	s := fmt.Sprintf("code %d", t.ExitCode)
	if t.Reason != "" {
		s += ", " + t.Reason
	}
	return s
}

func joinReason(reason, message string) string {
	switch {
	case reason == "":
		return orDefault(message, "no reason given")
	case message == "":
		return reason
	}
	return reason + ": " + message
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// sortEvents converts events and puts them in time order (last seen, then
// first seen, then name for a stable order).
func sortEvents(events []corev1.Event) []Event {
	type keyed struct {
		e    Event
		name string
	}
	ks := make([]keyed, 0, len(events))
	for _, e := range events {
		first, last := e.FirstTimestamp.Time, e.LastTimestamp.Time
		if !e.EventTime.IsZero() {
			if first.IsZero() {
				first = e.EventTime.Time
			}
			if last.IsZero() {
				last = e.EventTime.Time
			}
		}
		if e.Series != nil && !e.Series.LastObservedTime.IsZero() {
			last = e.Series.LastObservedTime.Time
		}
		if last.IsZero() {
			last = first
		}
		count := e.Count
		if e.Series != nil && e.Series.Count > count {
			count = e.Series.Count
		}
		ks = append(ks, keyed{Event{Type: e.Type, Reason: e.Reason, Object: e.InvolvedObject.FieldPath, Message: strings.TrimSpace(e.Message),
			Count: max(count, 1), FirstSeen: first, LastSeen: last}, e.Name})
	}
	// Core events carry whole seconds and events.k8s.io ones microseconds,
	// so times compare to the second and ties go in the order a pod's life
	// takes (scheduled, pulled, created, started).
	sec := func(t time.Time) time.Time { return t.Truncate(time.Second) }
	sort.SliceStable(ks, func(i, j int) bool {
		a, b := ks[i], ks[j]
		if la, lb := sec(a.e.LastSeen), sec(b.e.LastSeen); !la.Equal(lb) {
			return la.Before(lb)
		}
		if ra, rb := lifecycleRank[a.e.Reason], lifecycleRank[b.e.Reason]; ra != rb {
			return ra < rb
		}
		if fa, fb := sec(a.e.FirstSeen), sec(b.e.FirstSeen); !fa.Equal(fb) {
			return fa.Before(fb)
		}
		return a.name < b.name
	})
	out := make([]Event, len(ks))
	for i, k := range ks {
		out[i] = k.e
	}
	return out
}

// lifecycleRank orders events of the same second; reasons not listed come
// after these.
var lifecycleRank = map[string]int{"Scheduled": -6, "Pulling": -5, "Pulled": -4, "Created": -3, "Started": -2, "Killing": -1}
