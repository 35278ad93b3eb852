package simruntime_test

import (
	"errors"
	"strings"
	"testing"

	pl "github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/simruntime"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func annotated(ann map[string]string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "default", UID: "u", Annotations: ann},
		Spec: v1.PodSpec{InitContainers: []v1.Container{{Name: "init", Image: "i"}}, Containers: []v1.Container{{Name: "app", Image: "a"}}}}
}

// TestPodBehaviours: the annotations name containers of the pod and hold
// the behaviour clauses; other annotations are ignored; anything else is an
// *InputError naming the annotation, wrapping ErrInvalidInput (and the
// *ParseError behind a clause that does not parse).
func TestPodBehaviours(t *testing.T) {
	bs, err := simruntime.PodBehaviours(annotated(map[string]string{simruntime.AnnotationPrefix + "app": "run 30s exit 1; pull fail 2", "other": "x"}))
	if err != nil {
		t.Fatal(err)
	}
	if b := bs["app"]; !b.Exits || b.ExitCode != 1 || b.PullFailures != 2 || len(bs) != 1 {
		t.Fatalf("behaviours %v", bs)
	}
	if bs, err := simruntime.PodBehaviours(annotated(nil)); bs != nil || err != nil {
		t.Fatalf("no annotations: %v, %v", bs, err)
	}
	for _, tt := range []struct {
		ann       map[string]string
		want      string
		wantParse bool
	}{
		{map[string]string{simruntime.AnnotationPrefix + "ghost": "run 1s exit 0"}, `annotation sim.nodestate.io/ghost: the pod has no container "ghost"`, false},
		{map[string]string{simruntime.AnnotationPrefix + "app": "run sideways"}, `annotation sim.nodestate.io/app: line 1: clause "run sideways"`, true},
	} {
		_, err := simruntime.PodBehaviours(annotated(tt.ann))
		var ie *simruntime.InputError
		var pe *simruntime.ParseError
		if !errors.As(err, &ie) || !errors.Is(err, simruntime.ErrInvalidInput) || !strings.Contains(err.Error(), tt.want) ||
			errors.As(err, &pe) != tt.wantParse || strings.Count(err.Error(), "simruntime:") != 1 {
			t.Errorf("%v: error %v, want an *InputError saying %q (parse error %v)", tt.ann, err, tt.want, tt.wantParse)
		}
	}
	if _, err := simruntime.PodBehaviours(nil); !errors.Is(err, simruntime.ErrInvalidInput) {
		t.Errorf("nil pod: %v", err)
	}
	if _, err := simruntime.NewForPod(simruntime.DefaultOptions(), annotated(map[string]string{simruntime.AnnotationPrefix + "app": "pull fail x"})); !errors.Is(err, simruntime.ErrInvalidInput) {
		t.Errorf("NewForPod with a bad annotation: %v", err)
	}
}

// TestOptions: a token goes into every container ID, the IP into every
// ready sandbox of a pod that is not host-network, and options out of range
// are refused with an *OptionError naming the field.
func TestOptions(t *testing.T) {
	opts := simruntime.DefaultOptions()
	opts.Token, opts.IP = "ab12", "10.244.0.7"
	rt, err := simruntime.NewForPod(opts, annotated(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Do(t0, []pl.Action{{Kind: pl.CreateSandbox}, start}); err != nil {
		t.Fatal(err)
	}
	obs := rt.Due(t0)
	if len(obs) != 3 || obs[0].IP != "10.244.0.7" || obs[1].ContainerID != "sim://ab12-app-1" {
		t.Fatalf("observations %+v", obs)
	}
	host := annotated(nil)
	host.Spec.HostNetwork = true
	rt, _ = simruntime.NewForPod(opts, host)
	_ = rt.Do(t0, []pl.Action{{Kind: pl.CreateSandbox}})
	if obs := rt.Due(t0); len(obs) != 1 || obs[0].IP != "" {
		t.Fatalf("host-network sandbox %+v", obs)
	}
	for _, tt := range []struct {
		field string
		set   func(*simruntime.Options)
	}{
		{"Token", func(o *simruntime.Options) { o.Token = "a/b" }},
		{"IP", func(o *simruntime.Options) { o.IP = "10.0.0.1 " }},
		{"ImageSize", func(o *simruntime.Options) { o.ImageSize = -1 }},
	} {
		o := simruntime.DefaultOptions()
		tt.set(&o)
		_, err := simruntime.New(o, onePod(), nil)
		var oe *simruntime.OptionError
		if !errors.As(err, &oe) || oe.Field != tt.field || !errors.Is(err, simruntime.ErrInvalidOptions) {
			t.Errorf("%s: %v", tt.field, err)
		}
	}
}
