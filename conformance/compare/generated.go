package compare

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/nodestate/nodestate/podlifecycle/podlifecycletest"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
)

// GeneratedFor is how long a generated workload is observed, and
// generatedDeleteWithin the window its deletion (if any) falls in.
const (
	GeneratedFor          = 120 * time.Second
	generatedDeleteWithin = 75 * time.Second
	minDeleteAfter        = 2 * time.Second
)

// Generated returns n workloads of one generated pod each, drawn from
// seed: podlifecycletest's pods (init containers, sidecars, regular
// containers with their own restart policies and rules, exec probes,
// hooks, grace periods, active deadlines) with its behaviours and, one
// time in three, no deletion, else a graceful one within 75 s. Each pod's
// images are its own, as a named workload's are.
func Generated(seed, n int) []Workload {
	opts := podlifecycletest.GenOptions{MaxInit: 2, MaxRegular: 2}
	gen := podlifecycletest.Cases(opts, generatedDeleteWithin)
	out := make([]Workload, 0, n)
	for i := range n {
		tc := gen.Example(seed + i)
		name := fmt.Sprintf("gen-%d", seed+i)
		out = append(out, generatedWorkload(name, tc))
	}
	return out
}

func generatedWorkload(name string, tc podlifecycletest.TestCase) Workload {
	w := Workload{Name: name, What: describeCase(tc), For: GeneratedFor, Objects: func(node string) []runtime.Object {
		p := tc.Pod.DeepCopy()
		p.ObjectMeta = metav1.ObjectMeta{Name: name, Labels: map[string]string{"workload": name}, Annotations: map[string]string{}}
		p.Spec.NodeName = node
		rename := func(cs []corev1.Container) {
			for i := range cs {
				c := &cs[i]
				tagged := strings.Contains(c.Image[strings.LastIndex(c.Image, "/")+1:], ":")
				c.Image = "oracle.example/" + name + "-" + c.Name
				if tagged {
					c.Image += ":1"
				}
				if b, ok := tc.Behaviours[c.Name]; ok {
					p.Annotations[simruntime.AnnotationPrefix+c.Name] = b.String()
				}
			}
		}
		rename(p.Spec.InitContainers)
		rename(p.Spec.Containers)
		return []runtime.Object{p}
	}}
	if d := tc.Delete; d != nil {
		grace := d.Grace
		// A pod deleted within moments of its creation meets a node either
		// before or after its first sync, by chance: not before 2 s.
		w.Steps = append(w.Steps, Step{At: max(d.After, minDeleteAfter), What: "delete " + name, Do: func(ctx context.Context, c kubernetes.Interface, ns, _ string) error {
			return c.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: grace})
		}})
	}
	return w
}

// describeCase is a generated case in a line: its containers and their
// behaviours, and its deletion.
func describeCase(tc podlifecycletest.TestCase) string {
	var parts []string
	if p := tc.Pod.Spec.RestartPolicy; p != "" {
		parts = append(parts, "restartPolicy "+string(p))
	}
	for _, list := range [][]corev1.Container{tc.Pod.Spec.InitContainers, tc.Pod.Spec.Containers} {
		for _, c := range list {
			s := c.Name
			if b, ok := tc.Behaviours[c.Name]; ok {
				s += " (" + b.String() + ")"
			}
			parts = append(parts, s)
		}
	}
	if d := tc.Pod.Spec.ActiveDeadlineSeconds; d != nil {
		parts = append(parts, fmt.Sprintf("activeDeadlineSeconds %d", *d))
	}
	if g := tc.Pod.Spec.TerminationGracePeriodSeconds; g != nil {
		parts = append(parts, fmt.Sprintf("terminationGracePeriodSeconds %d", *g))
	}
	if d := tc.Delete; d != nil {
		s := "deleted at " + max(d.After, minDeleteAfter).String()
		if d.Grace != nil {
			s += fmt.Sprintf(" with grace %d", *d.Grace)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}
