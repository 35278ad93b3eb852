package podlifecycle

import (
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"
)

var (
	quantityType = reflect.TypeFor[resource.Quantity]()
	timeType     = reflect.TypeFor[metav1.Time]()
	microType    = reflect.TypeFor[metav1.MicroTime]()
)

// fill sets every exported field reachable from v to a drawn value: a
// pointer nil or set, a list nil, empty or of one or two elements, a map
// nil, empty or of one or two entries.
func fill(t *rapid.T, v reflect.Value, depth int) {
	switch v.Type() {
	case quantityType:
		v.Set(reflect.ValueOf(resource.MustParse(rapid.SampledFrom([]string{"0", "100m", "1", "64Mi", "1.5Gi"}).Draw(t, "quantity"))))
		return
	case timeType:
		v.Set(reflect.ValueOf(metav1.NewTime(time.Unix(rapid.Int64Range(0, 2e9).Draw(t, "time"), 0))))
		return
	case microType:
		v.Set(reflect.ValueOf(metav1.NewMicroTime(time.Unix(rapid.Int64Range(0, 2e9).Draw(t, "time"), 0))))
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(t, v.Field(i), depth)
			}
		}
	case reflect.Pointer:
		if depth > 6 || rapid.IntRange(0, 2).Draw(t, "nil") == 0 {
			return
		}
		p := reflect.New(v.Type().Elem())
		fill(t, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		n := rapid.IntRange(-1, 2).Draw(t, "len")
		if n < 0 || depth > 6 {
			return
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fill(t, s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Map:
		n := rapid.IntRange(-1, 2).Draw(t, "entries")
		if n < 0 || depth > 6 {
			return
		}
		m := reflect.MakeMap(v.Type())
		for range n {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(t, k, depth+1)
			fill(t, e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.String:
		v.SetString(rapid.SampledFrom([]string{"", "a", "cpu", "memory", "Running"}).Draw(t, "string"))
	case reflect.Bool:
		v.SetBool(rapid.Bool().Draw(t, "bool"))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(rapid.IntRange(-2, 2).Draw(t, "int")))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(rapid.IntRange(0, 3).Draw(t, "uint")))
	}
}

// scribble overwrites every exported field reachable from v, through
// pointers, lists and maps.
func scribble(v reflect.Value) {
	switch v.Type() {
	case quantityType:
		v.Set(reflect.ValueOf(resource.MustParse("7")))
		return
	case timeType, microType:
		v.Field(0).Set(reflect.ValueOf(time.Unix(7, 0)))
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				scribble(v.Field(i))
			}
		}
	case reflect.Pointer:
		if !v.IsNil() {
			scribble(v.Elem())
		}
	case reflect.Slice:
		for i := range v.Len() {
			scribble(v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			scribble(e)
			v.SetMapIndex(k, e)
		}
	case reflect.String:
		v.SetString("scribbled")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(v.Uint() + 7)
	}
}

// TestPropertyCopyOutIsDeepCopy: the copy of a status the machine hands
// out equals DeepCopy's field for field, for statuses with every field of
// the API drawn (nil, empty and set lists and pointers), and shares no
// memory with the status it copies.
func TestPropertyCopyOutIsDeepCopy(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var st v1.PodStatus
		fill(t, reflect.ValueOf(&st).Elem(), 0)
		want := st.DeepCopy()
		got := copyOut(&st)
		if !reflect.DeepEqual(&got, want) {
			t.Fatalf("copyOut differs from DeepCopy (-DeepCopy +copyOut):\n%s", cmp.Diff(want, &got))
		}
		scribble(reflect.ValueOf(&got).Elem())
		if !reflect.DeepEqual(&st, want) {
			t.Fatalf("copyOut's copy shares memory with the status (-before +after):\n%s", cmp.Diff(want, &st))
		}
	})
}
