package kube

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/nodestate/nodestate/kubeversion"
	"github.com/nodestate/nodestate/nodecondition"
	"github.com/nodestate/nodestate/podlifecycle"
)

func ctr(name, cpu, mem string) corev1.Container {
	c := corev1.Container{Name: name, Image: "i", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}}}
	if cpu != "" {
		c.Resources.Requests[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		c.Resources.Requests[corev1.ResourceMemory] = resource.MustParse(mem)
	}
	return c
}

func sidecar(c corev1.Container) corev1.Container {
	c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	return c
}

func podOf(name string, qos corev1.PodQOSClass, inits []corev1.Container, cs ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)},
		Spec:   corev1.PodSpec{InitContainers: inits, Containers: cs},
		Status: corev1.PodStatus{QOSClass: qos}}
}

// TestPodRequests: what a pod asks of the node is the larger of its regular
// containers plus its sidecars and, for each regular init container, that
// container plus the sidecars started before it; plus the overhead.
func TestPodRequests(t *testing.T) {
	withOverhead := podOf("o", "", nil, ctr("a", "100m", ""))
	withOverhead.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")}
	cases := []struct {
		name   string
		pod    *corev1.Pod
		cpu    string
		mem    string
		hasCPU bool
		hasMem bool
	}{
		{"regular containers add up", podOf("r", "", nil, ctr("a", "100m", "64Mi"), ctr("b", "200m", "")), "300m", "64Mi", true, true},
		{"a large regular init container wins", podOf("i", "", []corev1.Container{ctr("init", "2", "")}, ctr("a", "100m", "")), "2", "", true, false},
		{"a sidecar adds to the regular containers", podOf("s", "", []corev1.Container{sidecar(ctr("proxy", "100m", ""))}, ctr("a", "100m", "")), "200m", "", true, false},
		{"an init container after a sidecar runs next to it", podOf("is", "", []corev1.Container{sidecar(ctr("proxy", "500m", "")), ctr("init", "1", "")}, ctr("a", "100m", "")), "1500m", "", true, false},
		{"an init container before a sidecar runs alone", podOf("si", "", []corev1.Container{ctr("init", "1", ""), sidecar(ctr("proxy", "500m", ""))}, ctr("a", "100m", "")), "1", "", true, false},
		{"the overhead is added", withOverhead, "150m", "", true, false},
		{"no requests", podOf("n", "", nil, ctr("a", "", "")), "", "", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := podRequests(tc.pod)
			cpu, okc := got[corev1.ResourceCPU]
			mem, okm := got[corev1.ResourceMemory]
			if okc != tc.hasCPU || okm != tc.hasMem {
				t.Fatalf("requests %v: cpu present %v, memory present %v", got, okc, okm)
			}
			if okc && cpu.Cmp(resource.MustParse(tc.cpu)) != 0 {
				t.Errorf("cpu %s, want %s", cpu.String(), tc.cpu)
			}
			if okm && mem.Cmp(resource.MustParse(tc.mem)) != 0 {
				t.Errorf("memory %s, want %s", mem.String(), tc.mem)
			}
		})
	}
}

// TestAdmit: the kubelet's admission order and messages: the eviction
// manager's pressure rule first, then the pod count, CPU, memory, ephemeral
// storage and extended resources, the first failure only, with the
// scheduler's units (millicores, bytes).
func TestAdmit(t *testing.T) {
	alloc := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi"),
		corev1.ResourcePods: resource.MustParse("2"), "example.com/gpu": resource.MustParse("1"),
	}
	small := podOf("small", corev1.PodQOSBurstable, nil, ctr("a", "600m", "512Mi"))
	gpu := podOf("gpu", corev1.PodQOSBurstable, nil, ctr("a", "", ""))
	gpu.Spec.Containers[0].Resources.Requests["example.com/gpu"] = resource.MustParse("2")
	unknownExt := podOf("ext", corev1.PodQOSBurstable, nil, ctr("a", "", ""))
	unknownExt.Spec.Containers[0].Resources.Requests["example.com/fpga"] = resource.MustParse("9")
	critical := podOf("crit", corev1.PodQOSBestEffort, nil, ctr("a", "", ""))
	critical.Spec.Priority = ptr.To[int32](systemCriticalPriority)
	cases := []struct {
		name      string
		pod       *corev1.Pod
		running   []*corev1.Pod
		pressures nodecondition.Pressures
		want      *Rejection
	}{
		{"fits", small, nil, nodecondition.Pressures{}, nil},
		{"cpu is checked before memory", podOf("both", corev1.PodQOSBurstable, nil, ctr("a", "500m", "600Mi")), []*corev1.Pod{small}, nodecondition.Pressures{},
			&Rejection{ReasonOutOfCPU, "Node didn't have enough resource: cpu, requested: 500, used: 600, capacity: 1000"}},
		{"memory in bytes", podOf("mem", corev1.PodQOSBurstable, nil, ctr("a", "100m", "600Mi")), []*corev1.Pod{small}, nodecondition.Pressures{},
			&Rejection{ReasonOutOfMemory, "Node didn't have enough resource: memory, requested: 629145600, used: 536870912, capacity: 1073741824"}},
		{"the pod count comes first", podOf("third", corev1.PodQOSBurstable, nil, ctr("a", "100", "")), []*corev1.Pod{small, small}, nodecondition.Pressures{},
			&Rejection{ReasonOutOfPods, "Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2"}},
		{"an extended resource the node has", gpu, nil, nodecondition.Pressures{},
			&Rejection{"OutOfexample.com/gpu", "Node didn't have enough resource: example.com/gpu, requested: 2, used: 0, capacity: 1"}},
		{"an extended resource the node lacks is left to the cluster", unknownExt, nil, nodecondition.Pressures{}, nil},
		{"a BestEffort pod under memory pressure", podOf("be", corev1.PodQOSBestEffort, nil, ctr("a", "", "")), nil, nodecondition.Pressures{Memory: true},
			&Rejection{"Evicted", "The node had condition: [MemoryPressure]. "}},
		{"pressure is checked before resources", podOf("be2", corev1.PodQOSBestEffort, nil, ctr("a", "", "")), []*corev1.Pod{small, small}, nodecondition.Pressures{Memory: true},
			&Rejection{"Evicted", "The node had condition: [MemoryPressure]. "}},
		{"a critical pod under memory pressure", critical, nil, nodecondition.Pressures{Memory: true}, nil},
		{"a Burstable pod under memory pressure", small, nil, nodecondition.Pressures{Memory: true}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := admit(tc.pod, tc.running, alloc, nil, tc.pressures)
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Fatalf("admit = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestAdmitTaints: the kubelet checks only NoExecute taints, after the
// resources, and a pod that does not tolerate one is rejected with the
// TaintToleration predicate's message.
func TestAdmitTaints(t *testing.T) {
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourcePods: resource.MustParse("10")}
	taints := []corev1.Taint{{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule}, {Key: "gpu", Value: "yes", Effect: corev1.TaintEffectNoExecute}}
	reject := &Rejection{ReasonTaintToleration, "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate"}
	withTols := func(tols ...corev1.Toleration) *corev1.Pod {
		p := podOf("p", corev1.PodQOSBurstable, nil, ctr("a", "100m", ""))
		p.Spec.Tolerations = tols
		return p
	}
	big := withTols()
	big.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("2")
	cases := []struct {
		name string
		pod  *corev1.Pod
		want *Rejection
	}{
		{"no toleration: the NoExecute taint rejects, the NoSchedule one is the scheduler's", withTols(), reject},
		{"Equal with the value", withTols(corev1.Toleration{Key: "gpu", Value: "yes", Effect: corev1.TaintEffectNoExecute}), nil},
		{"Equal with another value", withTols(corev1.Toleration{Key: "gpu", Value: "no"}), reject},
		{"Exists on the key, any effect", withTols(corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists}), nil},
		{"Exists on the key, another effect", withTols(corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}), reject},
		{"Exists with no key tolerates everything", withTols(corev1.Toleration{Operator: corev1.TolerationOpExists}), nil},
		{"resources are checked first", big, &Rejection{ReasonOutOfCPU, "Node didn't have enough resource: cpu, requested: 2000, used: 0, capacity: 1000"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := admit(tc.pod, nil, alloc, taints, nodecondition.Pressures{})
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Fatalf("admit = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestNodeVersionProfile: a node made for a Kubernetes minor runs its pods
// with that minor's lifecycle defaults and reports that minor's release as
// its kubelet version (and its runtime's), as a kubelet of that release
// does; the default node is 1.37.2's.
func TestNodeVersionProfile(t *testing.T) {
	cases := []struct {
		v    kubeversion.Version
		want string
	}{
		{kubeversion.V1_33, "v1.33.13"},
		{kubeversion.V1_34, "v1.34.4"},
		{kubeversion.V1_36, "v1.36.3"},
		{kubeversion.Default, KubeletVersion},
	}
	for _, c := range cases {
		opts := DefaultOptionsFor("n1", c.v)
		want := podlifecycle.DefaultOptionsFor(c.v)
		want.Rand = processRand{} // a node on a real clock jitters as the kubelet does
		if diff := cmp.Diff(want, opts.Lifecycle, cmpopts.IgnoreUnexported(podlifecycle.Options{})); diff != "" {
			t.Errorf("%v: lifecycle options (-want +got):\n%s", c.v, diff)
		}
		if opts.Kubelet.Version != c.v {
			t.Errorf("%v: node status loop behaves as %v", c.v, opts.Kubelet.Version)
		}
		n, err := NewNode(opts, fake.NewClientset())
		if err != nil {
			t.Fatal(err)
		}
		// The pod status cache follows the version too: a 1.33 kubelet
		// writes no observedGeneration for a pod that has none yet.
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "u-" + types.UID(c.v.String()), Generation: 5},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "img"}}}}
		s, _, err := n.cache.SetPodStatus(pod, corev1.PodStatus{Phase: corev1.PodPending}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int64{true: 0, false: 5}[c.v == kubeversion.V1_33]; s.ObservedGeneration != want {
			t.Errorf("%v: the pod status cache wrote observedGeneration %d, want %d (statussync SS-V1)", c.v, s.ObservedGeneration, want)
		}
		info := n.rep.nodeObject().Status.NodeInfo
		if info.KubeletVersion != c.want || info.ContainerRuntimeVersion != "sim://1.0.0" {
			t.Errorf("%v: nodeInfo reports kubelet %q, runtime %q; want %q and the simulated runtime's sim://1.0.0", c.v, info.KubeletVersion, info.ContainerRuntimeVersion, c.want)
		}
	}
	if d := DefaultOptions("n1"); d.Lifecycle.Version != kubeversion.Default {
		t.Errorf("DefaultOptions behaves as %v, want %v", d.Lifecycle.Version, kubeversion.Default)
	}
}

// TestDeclaredFeatures: the kubelet's status.declaredFeatures for each
// minor: the node declared features framework on that minor's default
// gates, sorted; none before NodeDeclaredFeatures was on (1.36).
func TestDeclaredFeatures(t *testing.T) {
	want := []string{"ExtendWebSocketsToKubelet", "InPlacePodLevelResourcesVerticalScaling",
		"InPlacePodVerticalScalingInitContainers", "RestartAllContainersOnContainerExits"}
	for _, v := range []kubeversion.Version{kubeversion.V1_37, kubeversion.V1_36} {
		if got := declaredFeatures(v); !slices.Equal(got, want) {
			t.Errorf("%v: %v, want %v", v, got, want)
		}
	}
	for _, v := range []kubeversion.Version{kubeversion.V1_35, kubeversion.V1_34, kubeversion.V1_33} {
		if got := declaredFeatures(v); got != nil {
			t.Errorf("%v: %v, want none", v, got)
		}
	}
}

// TestNodeObject: the Node the kubelet registers: its InternalIP, then the
// Hostname address when one is set; ephemeral storage in its capacity, and
// capacity and allocatable in the kubelet's formats with its node
// allocatable reservations (oracle case "node": status.capacity and
// status.allocatable); the declared features; and no phase, which the
// kubelet never sets.
func TestNodeObject(t *testing.T) {
	opts := DefaultOptions("n1")
	n, err := NewNode(opts, fake.NewClientset())
	if err != nil {
		t.Fatal(err)
	}
	node := n.rep.nodeObject()
	if got := node.Status.Addresses; len(got) != 1 || got[0].Type != corev1.NodeInternalIP || got[0].Address != "127.0.0.1" {
		t.Errorf("addresses %v", got)
	}
	if node.Status.Phase != "" {
		t.Errorf("phase %q", node.Status.Phase)
	}
	for name, want := range map[corev1.ResourceName][2]string{
		"cpu": {"4", "4"}, "memory": {"16Gi", "16284Mi"}, "ephemeral-storage": {"107374182400", "96636764k"}, "pods": {"110", "110"},
	} {
		c, a := node.Status.Capacity[name], node.Status.Allocatable[name]
		if c.String() != want[0] || a.String() != want[1] {
			t.Errorf("%s: capacity %s, allocatable %s; want %s and %s", name, c.String(), a.String(), want[0], want[1])
		}
	}
	if len(node.Status.DeclaredFeatures) != 4 {
		t.Errorf("declared features %v", node.Status.DeclaredFeatures)
	}
	opts.Hostname = "n1"
	n, _ = NewNode(opts, fake.NewClientset())
	if got := n.rep.nodeObject().Status.Addresses; len(got) != 2 || got[1].Type != corev1.NodeHostName || got[1].Address != "n1" {
		t.Errorf("addresses with a hostname %v", got)
	}
}
