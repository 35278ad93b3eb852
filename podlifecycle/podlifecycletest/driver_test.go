package podlifecycletest_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	pl "github.com/nodestate/nodestate/podlifecycle"
	"github.com/nodestate/nodestate/podlifecycle/podlifecycletest"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func onePod() *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "app:1"}}}}
}

func TestRunRefuses(t *testing.T) {
	for _, tt := range []struct {
		field string
		opts  func(*podlifecycletest.Options)
	}{
		{"Until", func(o *podlifecycletest.Options) { o.Until = 0 }},
		{"MaxSteps", func(o *podlifecycletest.Options) { o.MaxSteps = 0 }},
		{"MaxStepsPerInstant", func(o *podlifecycletest.Options) { o.MaxStepsPerInstant = 0 }},
		{"Delete.After", func(o *podlifecycletest.Options) { o.Delete = &podlifecycletest.Deletion{After: -1} }},
	} {
		opts := podlifecycletest.DefaultOptions()
		tt.opts(&opts)
		_, err := podlifecycletest.Run(onePod(), nil, opts)
		var oe *podlifecycletest.OptionError
		if !errors.As(err, &oe) || oe.Field != tt.field || !errors.Is(err, podlifecycletest.ErrInvalidOptions) {
			t.Errorf("%s: got %v", tt.field, err)
		}
	}
	if _, err := podlifecycletest.Run(nil, nil, podlifecycletest.DefaultOptions()); !errors.Is(err, podlifecycletest.ErrInvalidInput) {
		t.Errorf("nil pod: %v", err)
	}
	noUID := onePod()
	noUID.UID = ""
	if _, err := podlifecycletest.Run(noUID, nil, podlifecycletest.DefaultOptions()); !errors.Is(err, pl.ErrInvalidInput) {
		t.Errorf("pod without a UID: %v", err)
	}
}

// TestRunEndsWhenFinished: a deleted pod's run ends with the finished Step.
func TestRunEndsWhenFinished(t *testing.T) {
	opts := podlifecycletest.DefaultOptions()
	opts.Delete = &podlifecycletest.Deletion{After: 5 * time.Second}
	tr, err := podlifecycletest.Run(onePod(), nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	last := tr.Steps[len(tr.Steps)-1]
	if !last.Result.Finished || last.At.Sub(tr.Start) != 5*time.Second || !strings.Contains(tr.String(), "finished") {
		t.Fatalf("want a finished last step at +5s:\n%s", tr)
	}
}
