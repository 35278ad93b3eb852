package compare

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/nodestate/nodestate/podlifecycle/simruntime"
)

// Workload is one scenario, run once on each node: the same objects,
// created at the same moment in a namespace of each node's, pinned to that
// node, and the same steps at the same offsets.
type Workload struct {
	// Name names the workload, its pods (bare pods) or its controller.
	Name string
	// What says what it exercises.
	What string
	// CI puts it in the subset make test runs on every CI run.
	CI bool
	// Objects returns what to create at the start, pinned to node: pods,
	// Jobs, Deployments, ConfigMaps.
	Objects func(node string) []runtime.Object
	// Steps run at their offsets from the start, once per node.
	Steps []Step
	// For is how long the workload is observed.
	For time.Duration
	// Start is when it is created, from the start of the run (0: at once).
	Start time.Duration
}

// Waves spreads ws over waves of size workloads, each created gap after
// the one before, so that a node never runs more than one wave's pods at
// once: a kubelet running hundreds of pods at once writes their statuses
// seconds late, which is load, not behaviour.
func Waves(ws []Workload, size int, gap time.Duration) []Workload {
	out := make([]Workload, len(ws))
	for i, w := range ws {
		w.Start = time.Duration(i/max(size, 1)) * gap
		out[i] = w
	}
	return out
}

// Step is something done to a workload at an offset from its start.
type Step struct {
	At   time.Duration
	What string
	Do   func(ctx context.Context, c kubernetes.Interface, ns, node string) error
}

// create creates o in namespace ns.
func create(ctx context.Context, c kubernetes.Interface, ns string, o runtime.Object) error {
	var err error
	switch x := o.(type) {
	case *corev1.Pod:
		_, err = c.CoreV1().Pods(ns).Create(ctx, x, metav1.CreateOptions{})
	case *corev1.ConfigMap:
		_, err = c.CoreV1().ConfigMaps(ns).Create(ctx, x, metav1.CreateOptions{})
	case *batchv1.Job:
		_, err = c.BatchV1().Jobs(ns).Create(ctx, x, metav1.CreateOptions{})
	case *appsv1.Deployment:
		_, err = c.AppsV1().Deployments(ns).Create(ctx, x, metav1.CreateOptions{})
	default:
		return fmt.Errorf("compare: cannot create a %T", o)
	}
	return err
}

// image is a workload's own image, so that no two workloads pull one image
// and whether a pull finds it present does not depend on which pod synced
// first.
func image(workload, container string) string {
	return "oracle.example/" + workload + "-" + container + ":1"
}

// ctr is a container of workload that behaves as clauses say ("" for the
// default behaviour).
type ctr struct {
	c       corev1.Container
	clauses string
}

func container(workload, name, clauses string, edit ...func(*corev1.Container)) ctr {
	c := corev1.Container{Name: name, Image: image(workload, name)}
	for _, e := range edit {
		e(&c)
	}
	return ctr{c: c, clauses: clauses}
}

// podOf is a pod called name with init containers inits and containers cs,
// bound to node, the behaviours in its annotations.
func podOf(name, node string, inits, cs []ctr, edit ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{}, Labels: map[string]string{"workload": name}},
		Spec:       corev1.PodSpec{NodeName: node},
	}
	for _, c := range inits {
		p.Spec.InitContainers = append(p.Spec.InitContainers, c.c)
		if c.clauses != "" {
			p.Annotations[simruntime.AnnotationPrefix+c.c.Name] = c.clauses
		}
	}
	for _, c := range cs {
		p.Spec.Containers = append(p.Spec.Containers, c.c)
		if c.clauses != "" {
			p.Annotations[simruntime.AnnotationPrefix+c.c.Name] = c.clauses
		}
	}
	for _, e := range edit {
		e(p)
	}
	return p
}

// single is a workload of one bare pod with one container "app".
func single(name, what string, ci bool, clauses string, d time.Duration, edit ...func(*corev1.Container)) Workload {
	return Workload{Name: name, What: what, CI: ci, For: d, Objects: func(node string) []runtime.Object {
		return []runtime.Object{podOf(name, node, nil, []ctr{container(name, "app", clauses, edit...)})}
	}}
}

func execProbe(period, threshold int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"check"}}},
		PeriodSeconds: period, FailureThreshold: threshold,
	}
}

func readiness(p *corev1.Probe) func(*corev1.Container) {
	return func(c *corev1.Container) { c.ReadinessProbe = p }
}

func liveness(p *corev1.Probe) func(*corev1.Container) {
	return func(c *corev1.Container) { c.LivenessProbe = p }
}

func startup(p *corev1.Probe) func(*corev1.Container) {
	return func(c *corev1.Container) { c.StartupProbe = p }
}

func resources(req, lim corev1.ResourceList) func(*corev1.Container) {
	return func(c *corev1.Container) { c.Resources = corev1.ResourceRequirements{Requests: req, Limits: lim} }
}

func list(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func withPolicy(p corev1.RestartPolicy) func(*corev1.Pod) {
	return func(pod *corev1.Pod) { pod.Spec.RestartPolicy = p }
}

func withGrace(s int64) func(*corev1.Pod) {
	return func(pod *corev1.Pod) { pod.Spec.TerminationGracePeriodSeconds = &s }
}

// job is a Job whose pod template is the pod podOf makes, with
// backoffLimit.
func job(name, node string, backoff int32, pod *corev1.Pod) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{
			BackoffLimit: &backoff,
			Template:     corev1.PodTemplateSpec{ObjectMeta: pod.ObjectMeta, Spec: pod.Spec},
		},
	}
}

// deleteStep deletes pod name at at, with the pod's own grace.
func deleteStep(at time.Duration, name string) Step {
	return Step{At: at, What: "delete " + name, Do: func(ctx context.Context, c kubernetes.Interface, ns, _ string) error {
		return c.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{})
	}}
}

// evictStep evicts pod name through the eviction API, as kubectl drain
// does.
func evictStep(at time.Duration, name string) Step {
	return Step{At: at, What: "evict " + name, Do: func(ctx context.Context, c kubernetes.Interface, ns, _ string) error {
		return c.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}})
	}}
}

// resizeStep patches pod name's container app through the resize
// subresource to cpu requests and limits.
func resizeStep(at time.Duration, name, cpu string) Step {
	patch := fmt.Sprintf(`{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":%q},"limits":{"cpu":%q}}}]}}`, cpu, cpu)
	return Step{At: at, What: "resize " + name + " to cpu " + cpu, Do: func(ctx context.Context, c kubernetes.Interface, ns, _ string) error {
		_, err := c.CoreV1().Pods(ns).Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "resize")
		return err
	}}
}

// gateStep sets pod name's readiness gate condition True, as the
// controller that owns it would.
func gateStep(at time.Duration, name, condition string) Step {
	return Step{At: at, What: "set " + condition, Do: func(ctx context.Context, c kubernetes.Interface, ns, _ string) error {
		patch := fmt.Sprintf(`{"status":{"conditions":[{"type":%q,"status":"True","lastTransitionTime":%q}]}}`,
			condition, time.Now().UTC().Format(time.RFC3339))
		_, err := c.CoreV1().Pods(ns).Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
		return err
	}}
}

// configMapStep creates the ConfigMap name.
func configMapStep(at time.Duration, name string) Step {
	return Step{At: at, What: "create ConfigMap " + name, Do: func(ctx context.Context, c kubernetes.Interface, ns, _ string) error {
		return create(ctx, c, ns, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": "v"}})
	}}
}

var _ = ptr.To[int32]
