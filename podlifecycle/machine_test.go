package podlifecycle

import (
	"errors"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

func TestNewRefusesBadInput(t *testing.T) {
	pod := &v1.Pod{}
	pod.UID = "u"
	pod.Spec.Containers = []v1.Container{{Name: "a"}, {Name: "a"}}
	if _, err := New(DefaultOptions(), pod); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("duplicate names: got %v", err)
	}
	if _, err := New(Options{}, pod); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("zero options: got %v", err)
	}
	var m Machine
	if _, err := m.Step(time.Time{}, pod, nil); !errors.Is(err, ErrNotInitialized) {
		t.Fatalf("zero machine: got %v", err)
	}
}
