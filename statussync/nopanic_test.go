package statussync_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodestate/nodestate/statussync"
	"github.com/nodestate/nodestate/statussync/statussynctest"
)

// TestNoPanics calls every exported function and every exported method of
// statussync and statussynctest, on zero and constructed receivers, with
// zero values and nils for every argument (a cancelled context for a
// context, so that nothing blocks), and fails on any panic
// (docs/conventions.md section 2). Methods are found by reflection, so a
// new method of a listed type is covered without editing the test; a new
// type or function must be added to the lists.
func TestNoPanics(t *testing.T) {
	api := statussynctest.NewAPI(1)
	cache := newCache(t, statussync.DefaultOptions())
	engine, err := statussync.NewEngine(cache, api, statussync.DefaultEngineOptions())
	if err != nil {
		t.Fatal(err)
	}
	planner, err := statussync.NewPlanner(cache, statussync.DefaultPlannerOptions())
	if err != nil {
		t.Fatal(err)
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u"}}
	if _, _, err := cache.SetPodStatus(pod, v1.PodStatus{}, epoch); err != nil {
		t.Fatal(err)
	}
	receivers := []any{
		// zero values
		&statussync.Cache{}, &statussync.Engine{}, &statussync.Planner{}, statussync.Options{},
		statussync.EngineOptions{}, statussync.PlannerOptions{}, &statussync.PodError{}, &statussync.OptionError{},
		statussync.Verb(0), statussync.Request{}, statussync.Outcome{}, statussync.Result{}, statussync.Ownership(0),
		&statussynctest.API{}, &statussynctest.History{}, statussynctest.Fault(0), statussynctest.Faults{},
		// constructed values
		cache, engine, planner, statussync.DefaultOptions(), api, statussynctest.NewHistory(),
		statussync.Verb(9), statussynctest.Fault(9),
	}
	functions := []any{
		statussync.IsMirror, statussync.IsStatic, statussync.Normalize, statussync.Patch,
		statussync.DefaultOptions, statussync.DefaultEngineOptions, statussync.DefaultPlannerOptions,
		statussync.NewCache, statussync.NewEngine, statussync.NewPlanner,
		statussynctest.NewAPI, statussynctest.NewHistory,
	}
	for _, r := range receivers {
		v := reflect.ValueOf(r)
		for i := range v.NumMethod() {
			m := v.Type().Method(i)
			call(t, fmt.Sprintf("(%T).%s", r, m.Name), v.Method(i))
		}
	}
	for _, f := range functions {
		call(t, reflect.ValueOf(f).Type().String(), reflect.ValueOf(f))
	}
}

func call(t *testing.T, name string, f reflect.Value) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ft := f.Type()
	args := make([]reflect.Value, ft.NumIn())
	for i := range args {
		in := ft.In(i)
		if ft.IsVariadic() && i == len(args)-1 {
			args[i] = reflect.Zero(in) // an empty variadic list
			continue
		}
		if in == reflect.TypeFor[context.Context]() {
			args[i] = reflect.ValueOf(ctx)
			continue
		}
		args[i] = reflect.Zero(in)
	}
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s panics on zero arguments: %v", name, r)
		}
	}()
	if ft.IsVariadic() {
		f.CallSlice(args)
	} else {
		f.Call(args)
	}
}

// TestErrors: every error unwraps to a sentinel of docs/conventions.md
// section 3 and names the package once.
func TestErrors(t *testing.T) {
	cache := newCache(t, statussync.DefaultOptions())
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p1", Namespace: "default", UID: "u1"}, Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app"}}}}
	_, _, err := cache.SetPodStatus(pod, v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{{Name: "ghost"}}}, epoch)
	const want = `statussync: pod default/p1 (uid "u1") container "ghost": unknown container`
	if err == nil || err.Error() != want || !errors.Is(err, statussync.ErrInvalidInput) || !errors.Is(err, statussync.ErrUnknownContainer) {
		t.Errorf("got %v, want %q wrapping ErrInvalidInput and ErrUnknownContainer", err, want)
	}
	_, err = statussync.NewEngine(cache, statussynctest.NewAPI(1), statussync.EngineOptions{})
	var oe *statussync.OptionError
	if !errors.Is(err, statussync.ErrInvalidOptions) || !errors.As(err, &oe) || oe.Field != "FullSyncPeriod" || strings.Count(err.Error(), "statussync:") != 1 {
		t.Errorf("zero EngineOptions: %v", err)
	}
	if _, err := statussync.NewPlanner(nil, statussync.DefaultPlannerOptions()); !errors.Is(err, statussync.ErrInvalidOptions) {
		t.Errorf("a nil cache: %v", err)
	}
	if err := (&statussync.Engine{}).Run(context.Background()); !errors.Is(err, statussync.ErrNotInitialized) {
		t.Errorf("Run of a zero Engine: %v", err)
	}
	if _, _, err := (&statussync.Cache{}).SetPodStatus(pod, v1.PodStatus{}, epoch); !errors.Is(err, statussync.ErrNotInitialized) {
		t.Errorf("SetPodStatus of a zero Cache: %v", err)
	}
	if _, _, err := statussync.Patch("u", "", nil, nil); !errors.Is(err, statussync.ErrInvalidInput) {
		t.Errorf("Patch of nil statuses: %v", err)
	}
}
