package podrunner_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	"github.com/nodestate/nodestate/podrunner"
	"github.com/nodestate/nodestate/statussync"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// recorder keeps the events it is given, rendered "Type Reason fieldPath: message".
type recorder struct {
	mu     sync.Mutex
	events []string
	refs   []*v1.ObjectReference
}

func (r *recorder) Event(object runtime.Object, eventtype, reason, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ref, _ := object.(*v1.ObjectReference)
	fp := ""
	if ref != nil {
		fp = ref.FieldPath
	}
	r.events = append(r.events, fmt.Sprintf("%s %s %s: %s", eventtype, reason, fp, message))
	r.refs = append(r.refs, ref)
}

func (r *recorder) reasons() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.events))
	copy(out, r.events)
	return out
}

// node is a runner in virtual time with its cache and recorder.
type node struct {
	t     *testing.T
	r     *podrunner.Runner
	cache *statussync.Cache
	rec   *recorder
	now   time.Time
}

func newNode(t *testing.T, opts podrunner.Options) *node {
	t.Helper()
	cache, err := statussync.NewCache(statussync.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	r, err := podrunner.New(opts, cache, rec)
	if err != nil {
		t.Fatal(err)
	}
	return &node{t: t, r: r, cache: cache, rec: rec, now: t0}
}

func defaultNode(t *testing.T) *node {
	opts := podrunner.DefaultOptions()
	opts.PodCIDR, opts.HostIPs = "10.244.1.0/24", []string{"192.0.2.10"}
	return newNode(t, opts)
}

// add adds pod on a simulated runtime following its annotations.
func (n *node) add(pod *v1.Pod) *simruntime.Runtime {
	n.t.Helper()
	rt, err := simruntime.NewForPod(simruntime.DefaultOptions(), pod)
	if err != nil {
		n.t.Fatal(err)
	}
	if err := n.r.Add(pod, rt); err != nil {
		n.t.Fatal(err)
	}
	return rt
}

// run advances virtual time for d: every wake-up the runner asks for, and
// at is called at each (nil: none); it stops at n.now+d.
func (n *node) run(d time.Duration) {
	n.t.Helper()
	end := n.now.Add(d)
	for i := 0; ; i++ {
		if i > 100_000 {
			n.t.Fatal("the runner never stops asking for wake-ups")
		}
		next := n.r.Advance(n.now)
		if next.IsZero() || next.After(end) {
			n.now = end
			n.r.Advance(n.now)
			return
		}
		if next.After(n.now) {
			n.now = next
		}
	}
}

// status returns the cached status of pod uid, failing when there is none.
func (n *node) status(uid types.UID) v1.PodStatus {
	n.t.Helper()
	st, ok := n.cache.GetPodStatus(uid)
	if !ok {
		n.t.Fatalf("no cached status for %s", uid)
	}
	return st
}

func testPod(name string, ann map[string]string, containers ...string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name),
		ResourceVersion: "1", Annotations: ann, CreationTimestamp: metav1.NewTime(t0)},
		Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways}}
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: c, Image: c + ":1", ImagePullPolicy: v1.PullIfNotPresent})
	}
	return p
}

// state renders the state of container name in st: "Running",
// "Waiting/<reason>", "Terminated/<reason>" or "none".
func state(st v1.PodStatus, name string) string {
	for _, cs := range st.ContainerStatuses {
		if cs.Name != name {
			continue
		}
		switch {
		case cs.State.Running != nil:
			return "Running"
		case cs.State.Waiting != nil:
			return "Waiting/" + cs.State.Waiting.Reason
		case cs.State.Terminated != nil:
			return "Terminated/" + cs.State.Terminated.Reason
		}
	}
	return "none"
}

var _ podrunner.Runtime = (*simruntime.Runtime)(nil)

// noteRuntime wraps a runtime, counting Do calls and failing the first
// fail of them.
type noteRuntime struct {
	podrunner.Runtime
	fail    int
	calls   int
	batches [][]podlifecycle.Action
}

func (f *noteRuntime) Do(now time.Time, actions []podlifecycle.Action) error {
	f.calls++
	if f.calls <= f.fail {
		return fmt.Errorf("backend unreachable")
	}
	f.batches = append(f.batches, append([]podlifecycle.Action(nil), actions...))
	return f.Runtime.Do(now, actions)
}
