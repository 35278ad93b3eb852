package compare

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// Workloads are the named workloads, in the order the report lists them.
func Workloads() []Workload {
	ws := []Workload{
		single("plain", "one container that runs until deleted", true, "", 40*time.Second),
		twoContainers(),
		single("guaranteed", "requests equal to limits: Guaranteed, status.resources and allocatedResources", true, "", 40*time.Second,
			resources(list("cpu", "100m", "memory", "64Mi"), list("cpu", "100m", "memory", "64Mi"))),
		single("burstable", "requests below limits: Burstable", false, "", 40*time.Second,
			resources(list("cpu", "50m", "memory", "32Mi"), list("cpu", "200m", "memory", "128Mi"))),
		readinessGate(),
		single("readiness", "an exec readiness probe that passes", true, "", 40*time.Second, readiness(execProbe(2, 3))),
		single("readiness-fails-first", "a readiness probe failing for the first 15 s", true, "readiness fail 0s-15s", 60*time.Second,
			readiness(execProbe(2, 1))),
		single("liveness-fails", "a liveness probe failing from 10 s of each instance's life: killed and restarted", false,
			"liveness fail 10s-", 100*time.Second, liveness(execProbe(2, 2))),
		single("startup-passes", "a startup probe failing for 8 s, then passing", true, "startup fail 0s-8s", 40*time.Second,
			startup(execProbe(2, 10))),
		single("startup-fails", "a startup probe that never passes: killed and restarted", false, "startup fail 0s-", 100*time.Second,
			startup(execProbe(2, 3))),
		initContainers(),
		initFails("init-fails-never", corev1.RestartPolicyNever, true),
		initFails("init-crashloop", corev1.RestartPolicyAlways, false),
		sidecarStartup(),
		sidecarJob(),
		single("crashloop", "exit 1 after 3 s, followed over five restarts", true, "run 3s exit 1", 210*time.Second),
		single("crashloop-readiness", "a crash loop with a readiness probe", false, "run 3s exit 1", 150*time.Second,
			readiness(execProbe(1, 1))),
		single("image-pull-fails", "every pull fails: ErrImagePull, ImagePullBackOff", true, "pull fail always", 120*time.Second),
		single("image-pull-retries", "two pulls fail, the third succeeds", false, "pull fail 2", 90*time.Second),
		single("image-pull-slow", "a pull that takes 5 s", false, "pull slow 5s", 40*time.Second),
		prestop(),
		ignoreSigterm(),
		activeDeadline(),
		jobWorkload("job-never-succeeds", corev1.RestartPolicyNever, "run 3s exit 0", 0, true),
		jobWorkload("job-never-fails", corev1.RestartPolicyNever, "run 3s exit 1", 1, false),
		jobWorkload("job-onfailure-succeeds", corev1.RestartPolicyOnFailure, "run 3s exit 0", 0, false),
		jobWorkload("job-onfailure-fails", corev1.RestartPolicyOnFailure, "run 2s exit 1", 2, true),
		restartRules(),
		configMapLate(),
		drained(),
		resize("resize", "200m", "an in-place CPU resize that fits", false),
		resizeDeferred(),
		postStartFails(),
		completes("completes-never", corev1.RestartPolicyNever, true),
		completes("completes-onfailure", corev1.RestartPolicyOnFailure, false),
		deployment(),
	}
	return ws
}

func twoContainers() Workload {
	const name = "two-containers"
	return Workload{Name: name, What: "two regular containers", For: 40 * time.Second, Objects: func(node string) []runtime.Object {
		return []runtime.Object{podOf(name, node, nil, []ctr{container(name, "app", ""), container(name, "helper", "")})}
	}}
}

func readinessGate() Workload {
	const name, gate = "readiness-gate", "example.com/gate"
	return Workload{Name: name, What: "a readiness gate set True after 10 s", For: 40 * time.Second,
		Objects: func(node string) []runtime.Object {
			return []runtime.Object{podOf(name, node, nil, []ctr{container(name, "app", "")}, func(p *corev1.Pod) {
				p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: gate}}
			})}
		},
		Steps: []Step{gateStep(10*time.Second, name, gate)}}
}

func initContainers() Workload {
	const name = "init-containers"
	return Workload{Name: name, What: "two init containers in order, then the app", CI: true, For: 40 * time.Second,
		Objects: func(node string) []runtime.Object {
			return []runtime.Object{podOf(name, node, []ctr{container(name, "first", "run 2s exit 0"), container(name, "second", "run 1s exit 0")},
				[]ctr{container(name, "app", "")})}
		}}
}

func initFails(name string, policy corev1.RestartPolicy, ci bool) Workload {
	return Workload{Name: name, What: "an init container exiting 1 under restartPolicy " + string(policy), CI: ci, For: 90 * time.Second,
		Objects: func(node string) []runtime.Object {
			return []runtime.Object{podOf(name, node, []ctr{container(name, "setup", "run 2s exit 1")}, []ctr{container(name, "app", "")},
				withPolicy(policy))}
		}}
}

func sidecarStartup() Workload {
	const name = "sidecar-startup"
	return Workload{Name: name, What: "a sidecar whose startup probe passes after 5 s; the app starts after it", CI: true, For: 40 * time.Second,
		Objects: func(node string) []runtime.Object {
			side := container(name, "proxy", "startup fail 0s-5s", startup(execProbe(1, 20)), func(c *corev1.Container) {
				c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
			})
			return []runtime.Object{podOf(name, node, []ctr{side}, []ctr{container(name, "app", "")})}
		}}
}

func sidecarJob() Workload {
	const name = "sidecar-job"
	return Workload{Name: name, What: "a Job whose app exits 0 beside a sidecar: the sidecar is stopped, the pod Succeeded", CI: true,
		For: 50 * time.Second, Objects: func(node string) []runtime.Object {
			side := container(name, "proxy", "", func(c *corev1.Container) { c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways) })
			p := podOf(name, node, []ctr{side}, []ctr{container(name, "app", "run 5s exit 0")}, withPolicy(corev1.RestartPolicyNever))
			return []runtime.Object{job(name, node, 0, p)}
		}}
}

func prestop() Workload {
	const name = "prestop"
	return Workload{Name: name, What: "a graceful delete with a preStop hook that takes 3 s", CI: true, For: 50 * time.Second,
		Objects: func(node string) []runtime.Object {
			c := container(name, "app", "prestop 3s", func(c *corev1.Container) {
				c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"drain"}}}}
			})
			return []runtime.Object{podOf(name, node, nil, []ctr{c})}
		},
		Steps: []Step{deleteStep(10*time.Second, name)}}
}

func ignoreSigterm() Workload {
	const name = "ignore-sigterm"
	return Workload{Name: name, What: "a graceful delete of a container ignoring SIGTERM: killed after the 5 s grace", CI: true,
		For: 50 * time.Second, Objects: func(node string) []runtime.Object {
			return []runtime.Object{podOf(name, node, nil, []ctr{container(name, "app", "ignore-sigterm 60s")}, withGrace(5))}
		},
		Steps: []Step{deleteStep(10*time.Second, name)}}
}

func activeDeadline() Workload {
	const name = "active-deadline"
	return Workload{Name: name, What: "activeDeadlineSeconds 10: Failed, DeadlineExceeded", CI: true, For: 50 * time.Second,
		Objects: func(node string) []runtime.Object {
			return []runtime.Object{podOf(name, node, nil, []ctr{container(name, "app", "")}, func(p *corev1.Pod) {
				p.Spec.ActiveDeadlineSeconds = ptr.To[int64](10)
			})}
		}}
}

func jobWorkload(name string, policy corev1.RestartPolicy, clauses string, backoff int32, ci bool) Workload {
	return Workload{Name: name, What: "a Job under restartPolicy " + string(policy) + ": " + clauses, CI: ci, For: 120 * time.Second,
		Objects: func(node string) []runtime.Object {
			p := podOf(name, node, nil, []ctr{container(name, "app", clauses)}, withPolicy(policy))
			return []runtime.Object{job(name, node, backoff, p)}
		}}
}

func restartRules() Workload {
	const name = "restart-rules"
	return Workload{Name: name, What: "restartPolicy Never with a rule restarting on exit code 42", CI: true, For: 90 * time.Second,
		Objects: func(node string) []runtime.Object {
			c := container(name, "app", "run 3s exit 42", func(c *corev1.Container) {
				c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyNever)
				c.RestartPolicyRules = []corev1.ContainerRestartRule{{Action: corev1.ContainerRestartRuleActionRestart,
					ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}
			})
			return []runtime.Object{podOf(name, node, nil, []ctr{c}, withPolicy(corev1.RestartPolicyNever))}
		}}
}

func configMapLate() Workload {
	const name = "configmap-late"
	return Workload{Name: name, What: "a ConfigMap volume whose ConfigMap appears after 15 s", CI: true, For: 60 * time.Second,
		Objects: func(node string) []runtime.Object {
			c := container(name, "app", "", func(c *corev1.Container) {
				c.VolumeMounts = []corev1.VolumeMount{{Name: "cfg", MountPath: "/etc/cfg"}}
			})
			return []runtime.Object{podOf(name, node, nil, []ctr{c}, func(p *corev1.Pod) {
				p.Spec.Volumes = []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{
					ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}}}
			})}
		},
		Steps: []Step{configMapStep(15*time.Second, name)}}
}

func drained() Workload {
	const name = "drained"
	return Workload{Name: name, What: "a pod evicted as kubectl drain evicts it", CI: true, For: 50 * time.Second,
		Objects: func(node string) []runtime.Object {
			return []runtime.Object{podOf(name, node, nil, []ctr{container(name, "app", "")}, withGrace(5))}
		},
		Steps: []Step{evictStep(10*time.Second, name)}}
}

func resize(name, cpu, what string, ci bool) Workload {
	return Workload{Name: name, What: what, CI: ci, For: 50 * time.Second,
		Objects: func(node string) []runtime.Object {
			return []runtime.Object{podOf(name, node, nil, []ctr{container(name, "app", "",
				resources(list("cpu", "100m", "memory", "64Mi"), list("cpu", "100m", "memory", "64Mi")))})}
		},
		Steps: []Step{resizeStep(10*time.Second, name, cpu)}}
}

func postStartFails() Workload {
	const name = "poststart-fails"
	return Workload{Name: name, What: "a postStart hook that fails: the container is killed and restarted", CI: true, For: 90 * time.Second,
		Objects: func(node string) []runtime.Object {
			// A hook of 2 s always spans one of the kubelet's relists (1 s
			// apart, plus the relist's own time), so the two syncs after
			// its kill always follow (rule 4.5); one of exactly 1 s spans
			// one or none by chance.
			c := container(name, "app", "poststart 2s fail", func(c *corev1.Container) {
				c.Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"init"}}}}
			})
			return []runtime.Object{podOf(name, node, nil, []ctr{c})}
		}}
}

func completes(name string, policy corev1.RestartPolicy, ci bool) Workload {
	return Workload{Name: name, What: "exit 0 after 3 s under restartPolicy " + string(policy) + ": Succeeded", CI: ci, For: 40 * time.Second,
		Objects: func(node string) []runtime.Object {
			return []runtime.Object{podOf(name, node, nil, []ctr{container(name, "app", "run 3s exit 0")}, withPolicy(policy))}
		}}
}

// deployment's pods pull their image every time (imagePullPolicy
// Always): with IfNotPresent, whether the second pod finds the image the
// first one is pulling present, or pulls it too, depends on whether their
// syncs overlap, on either node (seen in CI: the kubelet pulled twice,
// nodestate once).
func deployment() Workload {
	const name = "deployment"
	return Workload{Name: name, What: "a Deployment of two replicas with a readiness probe", CI: true, For: 50 * time.Second,
		Objects: func(node string) []runtime.Object {
			p := podOf(name, node, nil, []ctr{container(name, "app", "", readiness(execProbe(2, 3)),
				func(c *corev1.Container) { c.ImagePullPolicy = corev1.PullAlways })})
			sel := &metav1.LabelSelector{MatchLabels: p.Labels}
			return []runtime.Object{&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](2), Selector: sel,
				Template: corev1.PodTemplateSpec{ObjectMeta: p.ObjectMeta, Spec: p.Spec}}}}
		}}
}

// resizeDeferred is an in-place resize the node cannot fit now: another
// pod of the workload holds 3 of the node's 4 CPUs, so raising the app's
// CPU to 1 waits (PodResizePending, Deferred). A resize beyond the node's
// allocatable resources is refused by the API server itself.
func resizeDeferred() Workload {
	const name = "resize-deferred"
	return Workload{Name: name, What: "an in-place CPU resize the node cannot fit now: Deferred", CI: true, For: 50 * time.Second,
		Objects: func(node string) []runtime.Object {
			hog := podOf(name+"-hog", node, nil, []ctr{container(name, "hog", "", resources(list("cpu", "3"), nil))})
			hog.Labels["workload"] = name
			app := podOf(name, node, nil, []ctr{container(name, "app", "",
				resources(list("cpu", "100m", "memory", "64Mi"), list("cpu", "100m", "memory", "64Mi")))})
			return []runtime.Object{hog, app}
		},
		Steps: []Step{resizeStep(10*time.Second, name, "1")}}
}
