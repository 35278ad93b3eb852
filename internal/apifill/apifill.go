// Package apifill fills API objects by reflection, for tests that must
// cover every field of a type, those added by later API versions too:
// Fill draws a value for every exported field, Perturb draws one value
// again, Scribble overwrites everything a value reaches. It is imported by
// tests only.
package apifill

import (
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"
)

// maxDepth bounds the nesting of drawn pointers, lists and maps.
const maxDepth = 6

var (
	quantityType = reflect.TypeFor[resource.Quantity]()
	timeType     = reflect.TypeFor[metav1.Time]()
	microType    = reflect.TypeFor[metav1.MicroTime]()
	// quantities holds values equal by Cmp but written differently (1 and
	// 1000m), so that semantic comparisons meet both.
	quantities = []string{"0", "100m", "1", "1000m", "64Mi", "1.5Gi"}
)

func drawTime(t *rapid.T) time.Time {
	at := time.Unix(rapid.Int64Range(0, 3).Draw(t, "seconds"), rapid.SampledFrom([]int64{0, 5e8}).Draw(t, "nanos"))
	if rapid.Bool().Draw(t, "utc") {
		return at.UTC()
	}
	return at.In(time.FixedZone("east", 3600))
}

// Fill sets every exported field reachable from v to a drawn value: a
// pointer nil or set, a list nil, empty or of one or two elements, a map
// nil, empty or of one or two entries, strings and numbers from small sets
// (so that two draws are often equal).
func Fill(t *rapid.T, v reflect.Value) { fill(t, v, 0) }

func fill(t *rapid.T, v reflect.Value, depth int) {
	switch v.Type() {
	case quantityType:
		v.Set(reflect.ValueOf(resource.MustParse(rapid.SampledFrom(quantities).Draw(t, "quantity"))))
		return
	case timeType:
		v.Set(reflect.ValueOf(metav1.NewTime(drawTime(t))))
		return
	case microType:
		v.Set(reflect.ValueOf(metav1.NewMicroTime(drawTime(t))))
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
		v.Set(reflect.Zero(v.Type()))
		if depth > maxDepth || rapid.IntRange(0, 2).Draw(t, "nil") == 0 {
			return
		}
		p := reflect.New(v.Type().Elem())
		fill(t, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		v.Set(reflect.Zero(v.Type()))
		n := rapid.IntRange(-1, 2).Draw(t, "len")
		if n < 0 || depth > maxDepth {
			return
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fill(t, s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Map:
		v.Set(reflect.Zero(v.Type()))
		n := rapid.IntRange(-1, 2).Draw(t, "entries")
		if n < 0 || depth > maxDepth {
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
		v.SetInt(int64(rapid.IntRange(-1, 2).Draw(t, "int")))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(rapid.IntRange(0, 2).Draw(t, "uint")))
	}
}

// Perturb draws one value reachable from v (a field, an element, a
// pointer's target, a whole list or map) again with Fill, walking down from
// v at random, so that every field of v is as likely to be the one.
func Perturb(t *rapid.T, v reflect.Value) {
	for depth := 0; ; depth++ {
		if depth > 0 && (rapid.IntRange(0, 2).Draw(t, "here") == 0 || leaf(v)) {
			fill(t, v, 0)
			return
		}
		switch v.Kind() {
		case reflect.Struct:
			var fields []int
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					fields = append(fields, i)
				}
			}
			if len(fields) == 0 {
				return
			}
			v = v.Field(rapid.SampledFrom(fields).Draw(t, "field"))
		case reflect.Pointer:
			if v.IsNil() {
				fill(t, v, 0)
				return
			}
			v = v.Elem()
		case reflect.Slice:
			if v.Len() == 0 {
				fill(t, v, 0)
				return
			}
			v = v.Index(rapid.IntRange(0, v.Len()-1).Draw(t, "element"))
		default:
			fill(t, v, 0)
			return
		}
	}
}

// leaf reports whether v is drawn whole: a scalar, a map, or a quantity
// or time.
func leaf(v reflect.Value) bool {
	switch v.Type() {
	case quantityType, timeType, microType:
		return true
	}
	switch v.Kind() {
	case reflect.Struct, reflect.Pointer, reflect.Slice:
		return false
	}
	return true
}

// Scribble overwrites every exported field reachable from v, through
// pointers, lists and maps.
func Scribble(v reflect.Value) {
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
				Scribble(v.Field(i))
			}
		}
	case reflect.Pointer:
		if !v.IsNil() {
			Scribble(v.Elem())
		}
	case reflect.Slice:
		for i := range v.Len() {
			Scribble(v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			Scribble(e)
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
