package kube_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"pgregory.net/rapid"

	"github.com/nodestate/nodestate/events"
)

// TestFieldSelectorMatchesClientGo: events.FieldSelector selects what client-go's Search
// selects (GetFieldSelector with name and namespace, and kind and uid when set), for any
// reference, escaping included. client-go's terms come in a map's order, so both selectors
// are compared as parsed sets of requirements.
func TestFieldSelectorMatchesClientGo(t *testing.T) {
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: "http://127.0.0.1:1"}) // never contacted
	if err != nil {
		t.Fatal(err)
	}
	value := rapid.StringOf(rapid.SampledFrom([]rune{'a', 'b', '-', '.', ',', '=', '\\', '!', ' '}))
	rapid.Check(t, func(rt *rapid.T) {
		ref := &corev1.ObjectReference{
			Kind:      rapid.SampledFrom([]string{"", "Pod", "Node"}).Draw(rt, "kind"),
			Name:      value.Draw(rt, "name"),
			Namespace: value.Draw(rt, "namespace"),
			UID:       types.UID(value.Draw(rt, "uid")),
		}
		var kind, uid *string
		if ref.Kind != "" {
			kind = &ref.Kind
		}
		if ref.UID != "" {
			u := string(ref.UID)
			uid = &u
		}
		want := cs.CoreV1().Events("").GetFieldSelector(&ref.Name, &ref.Namespace, kind, uid)
		got, err := events.FieldSelector(ref)
		if err != nil {
			rt.Fatal(err)
		}
		parsed, err := fields.ParseSelector(got)
		if err != nil {
			rt.Fatalf("%q does not parse: %v", got, err)
		}
		if a, b := requirements(parsed), requirements(want); len(a) != len(b) || !sameSet(a, b) {
			rt.Fatalf("nodestate %q selects %v, client-go %q selects %v", got, a, want.String(), b)
		}
	})
}

func requirements(s fields.Selector) map[string]string {
	out := map[string]string{}
	for _, r := range s.Requirements() {
		out[r.Field+" "+string(r.Operator)] = r.Value
	}
	return out
}

func sameSet(a, b map[string]string) bool {
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
