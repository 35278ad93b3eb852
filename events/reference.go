package events

import (
	"fmt"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Reference returns the object reference client-go's reference.GetReference builds for obj: a
// *v1.ObjectReference is used as is; otherwise kind and apiVersion come from the object's type
// meta or, when that is empty, from scheme, and name, namespace, UID and resourceVersion from its
// metadata (a list gives only its resourceVersion). Errors are *InvalidEventError on field
// "object".
func Reference(scheme *runtime.Scheme, obj runtime.Object) (*v1.ObjectReference, error) {
	if obj == nil {
		return nil, &InvalidEventError{Field: "object", Value: "<nil>", Detail: "can't reference a nil object"}
	}
	if ref, ok := obj.(*v1.ObjectReference); ok {
		if ref == nil {
			return nil, &InvalidEventError{Field: "object", Value: "<nil>", Detail: "can't reference a nil object"}
		}
		return ref, nil
	}
	var common metav1.Common
	objectMeta, err := meta.Accessor(obj)
	if err != nil {
		common, err = meta.CommonAccessor(obj)
		if err != nil {
			return nil, &InvalidEventError{Field: "object", Value: fmt.Sprintf("%T", obj), Detail: "no object or list metadata: " + err.Error()}
		}
	} else {
		common = objectMeta
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Empty() {
		if scheme == nil {
			return nil, &InvalidEventError{Field: "object", Value: fmt.Sprintf("%T", obj), Detail: "no kind set and no scheme to look it up"}
		}
		gvks, _, err := scheme.ObjectKinds(obj)
		if err != nil {
			return nil, &InvalidEventError{Field: "object", Value: fmt.Sprintf("%T", obj), Detail: err.Error()}
		}
		if len(gvks) == 0 || gvks[0].Empty() {
			return nil, &InvalidEventError{Field: "object", Value: fmt.Sprintf("%T", obj), Detail: "no kind registered"}
		}
		gvk = gvks[0]
	}
	if objectMeta == nil {
		return &v1.ObjectReference{Kind: gvk.Kind, APIVersion: gvk.GroupVersion().String(), ResourceVersion: common.GetResourceVersion()}, nil
	}
	return &v1.ObjectReference{
		Kind:            gvk.Kind,
		APIVersion:      gvk.GroupVersion().String(),
		Name:            objectMeta.GetName(),
		Namespace:       objectMeta.GetNamespace(),
		UID:             objectMeta.GetUID(),
		ResourceVersion: objectMeta.GetResourceVersion(),
	}, nil
}

// EventName returns the name client-go gives a new event: the referenced object's name, a dot
// and the nanoseconds in lower-case hex; when that is not a valid DNS subdomain (too long, upper
// case, bad characters), a random version 4 UUID drawn from r instead (kubernetes#127594). A nil
// r is math/rand/v2's process-wide source.
func EventName(refName string, unixNano int64, r Rand) string {
	name := refName + "." + strconv.FormatInt(unixNano, 16)
	if len(validation.IsDNS1123Subdomain(name)) == 0 {
		return name
	}
	return newUUID(r)
}

// newUUID returns a random (version 4, RFC 9562) UUID in its canonical text form, its 128 bits
// taken from three 53-bit draws of r.
func newUUID(r Rand) string {
	const scale = 1 << 53
	a, b, c := uint64(unit(r)*scale), uint64(unit(r)*scale), uint64(unit(r)*scale)
	hi := a<<11 | c>>42
	lo := b<<11 | (c>>31)&0x7ff
	var u [16]byte
	for i := range 8 {
		u[i] = byte(hi >> (56 - 8*i))
		u[8+i] = byte(lo >> (56 - 8*i))
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	var out [36]byte
	j := 0
	for i, x := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out[j] = '-'
			j++
		}
		out[j], out[j+1] = hexDigits[x>>4], hexDigits[x&0xf]
		j += 2
	}
	return string(out[:])
}

// FieldSelector returns the field selector that lists the core/v1 events about the object ref
// refers to, as kubectl describe asks for them (client-go's Search and GetFieldSelector):
// involvedObject.name and involvedObject.namespace always, involvedObject.kind and
// involvedObject.uid when set, values escaped, in that (sorted) order where client-go's
// order follows a map's. A nil ref is an *InvalidEventError.
func FieldSelector(ref *v1.ObjectReference) (string, error) {
	if ref == nil {
		return "", &InvalidEventError{Field: "object", Value: "<nil>", Detail: "can't select the events of a nil reference"}
	}
	var b strings.Builder
	term := func(field, value string) {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(field)
		b.WriteByte('=')
		b.WriteString(fields.EscapeValue(value))
	}
	if ref.Kind != "" {
		term("involvedObject.kind", ref.Kind)
	}
	term("involvedObject.name", ref.Name)
	term("involvedObject.namespace", ref.Namespace)
	if ref.UID != "" {
		term("involvedObject.uid", string(ref.UID))
	}
	return b.String(), nil
}
