package agent

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// behavior is what the simulated runtime does with one container: the pod spec says what the
// kubelet is asked to run, the behavior what then happens on the node.
type behavior struct {
	// pullError is the CRI error text of every pull of the image; "" pulls succeed.
	pullError string
	// pullTime is how long a successful pull takes.
	pullTime time.Duration
	// imageSize is the size the Pulled event reports.
	imageSize int64
	// runFor is how long each instance runs before it exits; 0 runs until stopped.
	runFor time.Duration
	// exitCode is the exit code after runFor.
	exitCode int32
	// failingProbes is how many readiness probes fail before the first success.
	failingProbes int
}

// plan is one pod to run: its spec and how its containers behave.
type plan struct {
	pod       *v1.Pod
	behaviors map[string]behavior
}

// runtimeBehaviours are the plan's behaviours for the simulated runtime. A readiness probe
// ticks at initialDelaySeconds (plus the kubelet's random first delay of less than a period)
// and then every period, so a failure window of failingProbes periods after the delay fails
// exactly the first failingProbes probes.
func (pl plan) runtimeBehaviours() simruntime.Behaviours {
	bs := simruntime.Behaviours{}
	for _, list := range [][]v1.Container{pl.pod.Spec.InitContainers, pl.pod.Spec.Containers} {
		for i := range list {
			c := &list[i]
			b := pl.behaviors[c.Name]
			rb := simruntime.Behaviour{Exits: b.runFor > 0, Run: b.runFor, ExitCode: b.exitCode,
				PullAlwaysFails: b.pullError != "", PullTime: b.pullTime}
			if pr := c.ReadinessProbe; pr != nil && b.failingProbes > 0 {
				rb.Probes = []simruntime.ProbeWindow{{Probe: podlifecycle.Readiness, Outcome: podlifecycle.ProbeFailure,
					To: time.Duration(pr.InitialDelaySeconds+int32(b.failingProbes)*pr.PeriodSeconds) * time.Second}}
			}
			bs[c.Name] = rb
		}
	}
	return bs
}

// The images the workloads use. The node has none of them at start.
const (
	imageWeb      = "registry.k8s.io/e2e-test-images/nginx:1.15-4"
	imageAPI      = "registry.example.com/shop/api:2.8.1"
	imageMigrate  = "registry.example.com/shop/api-migrate:2.8.1"
	imageDB       = "registry.example.com/library/postgres:17.2"
	imageBusybox  = "registry.k8s.io/e2e-test-images/busybox:1.37.0-1"
	imageReport   = "registry.example.com/batch/report:1.4.0"
	imageShipper  = "registry.example.com/logging/shipper:0.9.3"
	imageWorker   = "registry.example.com/shop/worker:3.1.0"
	imageCacheBad = "registry.example.com/shop/cache:v2-missing"
)

// pullNotFound is the containerd error for an image tag the registry does not have.
const pullNotFound = `rpc error: code = NotFound desc = failed to pull and unpack image "` + imageCacheBad +
	`": failed to resolve reference "` + imageCacheBad + `": ` + imageCacheBad + `: not found`

// kinds of workload, in the order pods are handed out: the interesting ones first, so that even
// a small --pods shows a crash loop, a failing pull and a Job.
const (
	kindWorker = iota
	kindCache
	kindReport
	kindAPI
	kindDB
	kindWeb
	kindWeb2
	kindWeb3
	numKinds
)

const alnum = "bcdfghjklmnpqrstvwxz2456789" // the alphabet of generated name suffixes

func suffix(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alnum[rng.IntN(len(alnum))]
	}
	return string(b)
}

func hexSuffix(rng *rand.Rand, n int) string {
	const hex = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = hex[rng.IntN(len(hex))]
	}
	return string(b)
}

func uid(rng *rand.Rand) types.UID {
	return types.UID(fmt.Sprintf("%s-%s-4%s-%s-%s", hexSuffix(rng, 8), hexSuffix(rng, 4), hexSuffix(rng, 3), hexSuffix(rng, 4), hexSuffix(rng, 12)))
}

func jitter(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(rng.Int64N(int64(hi-lo)+1)).Truncate(100*time.Millisecond)
}

// workloads returns n pods for node in namespace, with names, UIDs and timings drawn from rng:
// Deployments with readiness probes, a StatefulSet pod with init containers, a Job with a
// sidecar, a crash-looping worker and a cache whose image cannot be pulled, handed out in that
// order of interest and then again with new replicas.
func workloads(n int, node, namespace string, rng *rand.Rand) []plan {
	hashes := make([]string, numKinds)
	for i := range hashes {
		hashes[i] = suffix(rng, 10)
	}
	plans := make([]plan, 0, n)
	for i := range n {
		kind, round := i%numKinds, i/numKinds
		hash := hashes[kind]
		if kind >= kindWeb {
			hash = hashes[kindWeb] // three replicas of one Deployment
		}
		p := build(kind, round, hash, rng)
		p.pod.Namespace = namespace
		p.pod.UID = uid(rng)
		p.pod.Spec.NodeName = node
		if p.pod.Spec.RestartPolicy == "" {
			p.pod.Spec.RestartPolicy = v1.RestartPolicyAlways
		}
		if p.pod.Spec.TerminationGracePeriodSeconds == nil {
			p.pod.Spec.TerminationGracePeriodSeconds = new(int64(30))
		}
		p.pod.Spec.SchedulerName = v1.DefaultSchedulerName
		p.pod.Spec.Tolerations = append(p.pod.Spec.Tolerations,
			v1.Toleration{Key: v1.TaintNodeNotReady, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: new(int64(300))},
			v1.Toleration{Key: v1.TaintNodeUnreachable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: new(int64(300))})
		// The scheduler bound the pod to this node; the kubelet owns every other condition.
		p.pod.Status = v1.PodStatus{Phase: v1.PodPending, Conditions: []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionTrue}}}
		for _, list := range [][]v1.Container{p.pod.Spec.InitContainers, p.pod.Spec.Containers} {
			for j := range list {
				c := &list[j]
				c.TerminationMessagePath = v1.TerminationMessagePathDefault
				c.TerminationMessagePolicy = v1.TerminationMessageReadFile
				if c.ImagePullPolicy == "" {
					c.ImagePullPolicy = v1.PullIfNotPresent
				}
				b := p.behaviors[c.Name]
				if b.pullTime == 0 {
					b.pullTime = jitter(rng, 800*time.Millisecond, 4*time.Second)
				}
				b.imageSize = 4<<20 + rng.Int64N(120<<20)
				p.behaviors[c.Name] = b
			}
		}
		plans = append(plans, p)
	}
	return plans
}

func readiness(path string, port int32, delay int32) *v1.Probe {
	return &v1.Probe{
		ProbeHandler:        v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: path, Port: intstr.FromInt32(port), Scheme: v1.URISchemeHTTP}},
		InitialDelaySeconds: delay, PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3,
	}
}

func build(kind, round int, hash string, rng *rand.Rand) plan {
	// No owner references: on a real cluster the garbage collector deletes pods whose owner
	// does not exist.
	meta := func(base, owner string) metav1.ObjectMeta {
		return metav1.ObjectMeta{
			Name:   base + "-" + hash + "-" + suffix(rng, 5),
			Labels: map[string]string{"app": owner, "pod-template-hash": hash},
		}
	}
	switch kind {
	case kindWorker:
		// A queue worker that exits 1 a few seconds after each start: CrashLoopBackOff.
		return plan{
			pod: &v1.Pod{ObjectMeta: meta("worker", "worker"), Spec: v1.PodSpec{
				Containers: []v1.Container{{Name: "worker", Image: imageWorker, Args: []string{"--queue=orders"}}},
			}},
			behaviors: map[string]behavior{"worker": {runFor: jitter(rng, 2*time.Second, 6*time.Second), exitCode: 1}},
		}
	case kindCache:
		// A cache whose image tag does not exist: ErrImagePull, then ImagePullBackOff.
		return plan{
			pod: &v1.Pod{ObjectMeta: meta("cache", "cache"), Spec: v1.PodSpec{
				Containers: []v1.Container{{Name: "cache", Image: imageCacheBad, ReadinessProbe: readiness("/ready", 6379, 2)}},
			}},
			behaviors: map[string]behavior{"cache": {pullError: pullNotFound}},
		}
	case kindReport:
		// A Job pod with a log-shipping sidecar: the report runs to completion, the kubelet then
		// stops the sidecar and the pod Succeeds.
		name := fmt.Sprintf("report-%d-%s", 29000000+rng.IntN(1000000), suffix(rng, 5))
		return plan{
			pod: &v1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"job-name": "report", "batch.kubernetes.io/job-name": "report"}},
				Spec: v1.PodSpec{
					RestartPolicy: v1.RestartPolicyNever,
					InitContainers: []v1.Container{{Name: "log-shipper", Image: imageShipper,
						RestartPolicy: new(v1.ContainerRestartPolicyAlways)}},
					Containers: []v1.Container{{Name: "report", Image: imageReport, Args: []string{"--period=daily"}}},
				},
			},
			behaviors: map[string]behavior{
				"log-shipper": {},
				"report":      {runFor: jitter(rng, 60*time.Second, 150*time.Second)},
			},
		}
	case kindAPI:
		// An API server Deployment: a migration init container, then a readiness probe that
		// fails while the caches warm up.
		return plan{
			pod: &v1.Pod{ObjectMeta: meta("api", "api"), Spec: v1.PodSpec{
				InitContainers: []v1.Container{{Name: "migrate", Image: imageMigrate, Args: []string{"migrate", "up"}}},
				Containers:     []v1.Container{{Name: "api", Image: imageAPI, ReadinessProbe: readiness("/healthz", 8080, 5)}},
			}},
			behaviors: map[string]behavior{
				"migrate": {runFor: jitter(rng, 4*time.Second, 12*time.Second)},
				"api":     {failingProbes: 2 + rng.IntN(2)},
			},
		}
	case kindDB:
		// A StatefulSet pod with two init containers run one after the other.
		name := fmt.Sprintf("db-%d", round)
		return plan{
			pod: &v1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "db", "statefulset.kubernetes.io/pod-name": name}},
				Spec: v1.PodSpec{
					InitContainers: []v1.Container{
						{Name: "init-permissions", Image: imageBusybox, Command: []string{"sh", "-c", "chown -R 999:999 /var/lib/postgresql/data"}},
						{Name: "wait-for-config", Image: imageBusybox, Command: []string{"sh", "-c", "until test -f /config/ready; do sleep 1; done"}},
					},
					Containers: []v1.Container{{Name: "postgres", Image: imageDB, ReadinessProbe: readiness("/", 5432, 10)}},
				},
			},
			behaviors: map[string]behavior{
				"init-permissions": {runFor: jitter(rng, 1*time.Second, 3*time.Second)},
				"wait-for-config":  {runFor: jitter(rng, 5*time.Second, 20*time.Second)},
				"postgres":         {failingProbes: rng.IntN(2)},
			},
		}
	default:
		// The web front end, three replicas with a readiness probe.
		return plan{
			pod: &v1.Pod{ObjectMeta: meta("web", "web"), Spec: v1.PodSpec{
				Containers: []v1.Container{{Name: "nginx", Image: imageWeb, Ports: []v1.ContainerPort{{ContainerPort: 80, Protocol: v1.ProtocolTCP}},
					ReadinessProbe: readiness("/", 80, 3)}},
			}},
			behaviors: map[string]behavior{"nginx": {failingProbes: rng.IntN(2)}},
		}
	}
}
