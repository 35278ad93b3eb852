package compare

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A value is what a normalised object holds: JSON's map[string]any,
// []any, string, float64, bool or nil.
type value = any

// timeFields are the keys whose values are times: a normalised object keeps
// "t" in their place (so that a time that is set on one node and missing
// on the other still differs) and the time, relative to the object's zero,
// aside.
var timeFields = map[string]bool{
	"startTime": true, "lastTransitionTime": true, "lastProbeTime": true,
	"startedAt": true, "finishedAt": true, "lastHeartbeatTime": true,
}

// subject is what identifies one copy of a workload's pod on one node, and
// is replaced in its strings so that the two copies read alike.
type subject struct {
	Namespace, Name string
	UID             types.UID
	Node            string
}

// normalizer normalises the versions of one pod on one node. Container IDs
// become c1, c2, ... in the order they first appear (keeping the scheme),
// pod IPs ip1, ip2, ..., host IPs host-ip, and times offsets from zero.
type normalizer struct {
	subj    subject
	hostIPs map[string]bool
	zero    time.Time
	ids     map[string]string
	podIPs  map[string]string
}

func newNormalizer(s subject, zero time.Time, hostIPs []string) *normalizer {
	n := &normalizer{subj: s, zero: zero, ids: map[string]string{}, podIPs: map[string]string{}, hostIPs: map[string]bool{}}
	for _, ip := range hostIPs {
		n.hostIPs[ip] = true
	}
	return n
}

// normalized is one object after normalisation: its canonical JSON without
// times (Key), the object itself, and its times by path.
type normalized struct {
	Key   string
	Obj   map[string]any
	Times map[string]time.Duration
}

// status normalises a pod status.
func (n *normalizer) status(s *corev1.PodStatus) (normalized, error) {
	return n.object(s)
}

func (n *normalizer) object(v any) (normalized, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return normalized{}, err
	}
	var obj map[string]any
	if err := json.Unmarshal(b, &obj); err != nil {
		return normalized{}, err
	}
	out := normalized{Times: map[string]time.Duration{}}
	walked, _ := n.walk("", "", obj, out.Times).(map[string]any)
	out.Obj = walked
	key, err := json.Marshal(walked)
	if err != nil {
		return normalized{}, err
	}
	out.Key = string(key)
	return out, nil
}

// walk returns v normalised; path names v ("containerStatuses[app].state"),
// key is the map key v is found under.
func (n *normalizer) walk(path, key string, v value, times map[string]time.Duration) value {
	switch x := v.(type) {
	case map[string]any:
		// In key order: container IDs and pod IPs are numbered as they
		// are met, which must not depend on the map's order.
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		// A container status met first with a last state too shows two
		// instances: the last state's is the older, and is numbered
		// first, as on a node whose statuses showed the two one after
		// the other.
		if last, ok := x["lastState"].(map[string]any); ok {
			if term, ok := last["terminated"].(map[string]any); ok {
				if id, ok := term["containerID"].(string); ok {
					n.containerID(id, containerOf(path+".lastState"))
				}
			}
		}
		for _, k := range keys {
			x[k] = n.walk(join(path, k), k, x[k], times)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = n.walk(path+"["+elemName(e, i)+"]", key, e, times)
		}
		return x
	case string:
		if timeFields[key] {
			t, err := time.Parse(time.RFC3339, x)
			if err != nil {
				return x
			}
			times[path] = t.Sub(n.zero)
			return "t"
		}
		return n.str(path, key, x)
	}
	return v
}

// str normalises one string value found under key at path.
func (n *normalizer) str(path, key, s string) string {
	switch key {
	case "containerID":
		return n.containerID(s, containerOf(path))
	case "podIP", "ip", "hostIP":
		return n.ip(s)
	case "address":
		if _, err := netip.ParseAddr(s); err == nil {
			return n.ip(s)
		}
	}
	return n.text(s)
}

var (
	// saVolume is the name the ServiceAccount admission plugin gives a
	// pod's token volume: its suffix is random.
	saVolume = regexp.MustCompile(`kube-api-access-[a-z0-9]{5}`)
	// pullTook is how long a pull took in the Pulled event's message
	// ("in 1.2s (1.2s including waiting)"): the pull's timing is compared
	// through the statuses, the message's duration not at all.
	pullTook = regexp.MustCompile(`in [0-9.]+[a-zµ]+ \([0-9.]+[a-zµ]+ including waiting\)`)
)

func (n *normalizer) containerID(id, container string) string {
	if id == "" {
		return ""
	}
	if p, ok := n.ids[id]; ok {
		return p
	}
	scheme := ""
	if i := strings.Index(id, "://"); i >= 0 {
		scheme = id[:i+3]
	}
	// Numbered per container, in the order its instances appear: two
	// containers started in one sync are numbered alike on both nodes.
	k := 1
	for _, p := range n.ids {
		if strings.HasPrefix(p, scheme+container+"#") {
			k++
		}
	}
	p := scheme + container + "#" + strconv.Itoa(k)
	n.ids[id] = p
	return p
}

// containerOf is the container a path inside a container status names
// ("containerStatuses[app].state..." is app's), "" for another path.
func containerOf(path string) string {
	i, j := strings.IndexByte(path, '['), strings.IndexByte(path, ']')
	if i < 0 || j < i || !strings.HasSuffix(strings.ToLower(path[:i]), "containerstatuses") {
		return ""
	}
	return path[i+1 : j]
}

func (n *normalizer) ip(ip string) string {
	if ip == "" {
		return ""
	}
	if n.hostIPs[ip] {
		return "host-ip"
	}
	if p, ok := n.podIPs[ip]; ok {
		return p
	}
	p := "ip" + strconv.Itoa(len(n.podIPs)+1)
	n.podIPs[ip] = p
	return p
}

// text replaces the subject's namespace, name, UID and node in free text
// (messages, event notes), longest first so that a name inside another is
// not replaced in it.
func (n *normalizer) text(s string) string {
	type r struct{ from, to string }
	rs := []r{{string(n.subj.UID), "<uid>"}, {n.subj.Namespace, "<namespace>"}, {n.subj.Name, "<pod>"}, {n.subj.Node, "<node>"}}
	sort.SliceStable(rs, func(i, j int) bool { return len(rs[i].from) > len(rs[j].from) })
	for _, x := range rs {
		if x.from != "" {
			s = strings.ReplaceAll(s, x.from, x.to)
		}
	}
	for ip, p := range n.podIPs {
		s = strings.ReplaceAll(s, ip, p)
	}
	s = saVolume.ReplaceAllString(s, "kube-api-access-*")
	return pullTook.ReplaceAllString(s, "in <d> (<d> including waiting)")
}

// elemName names a list element by its "name" or "type", else its index.
func elemName(e value, i int) string {
	if m, ok := e.(map[string]any); ok {
		for _, k := range []string{"name", "type"} {
			if s, ok := m[k].(string); ok && s != "" {
				return s
			}
		}
	}
	return strconv.Itoa(i)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// Difference is one field that differs between the two nodes' objects.
type Difference struct {
	// Path names the field ("containerStatuses[app].state.waiting.reason").
	Path string
	// Kubelet and Nodestate are its values, rendered as JSON ("" when absent).
	Kubelet, Nodestate string
}

func (d Difference) String() string {
	return fmt.Sprintf("%s: kubelet %s, nodestate %s", d.Path, orAbsent(d.Kubelet), orAbsent(d.Nodestate))
}

func orAbsent(s string) string {
	if s == "" {
		return "(absent)"
	}
	return s
}

// diff lists the fields in which a and b differ, sorted by path; lists are
// compared element by element, by name where their elements have one.
func diff(a, b value) []Difference {
	var out []Difference
	diffInto(&out, "", a, b)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func diffInto(out *[]Difference, path string, a, b value) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		for k := range keys {
			diffInto(out, join(path, k), am[k], bm[k])
		}
		return
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok {
		diffLists(out, path, al, bl)
		return
	}
	ja, jb := render(a), render(b)
	if ja != jb {
		*out = append(*out, Difference{Path: path, Kubelet: ja, Nodestate: jb})
	}
}

// diffLists pairs elements by name when every element has a distinct one
// (container statuses, conditions), else by index.
func diffLists(out *[]Difference, path string, a, b []any) {
	an, aok := names(a)
	bn, bok := names(b)
	if !aok || !bok {
		for i := 0; i < max(len(a), len(b)); i++ {
			var x, y value
			if i < len(a) {
				x = a[i]
			}
			if i < len(b) {
				y = b[i]
			}
			diffInto(out, path+"["+strconv.Itoa(i)+"]", x, y)
		}
		return
	}
	seen := map[string]bool{}
	for i, name := range an {
		seen[name] = true
		j := indexOf(bn, name)
		var y value
		if j >= 0 {
			y = b[j]
		}
		diffInto(out, path+"["+name+"]", a[i], y)
	}
	for j, name := range bn {
		if !seen[name] {
			diffInto(out, path+"["+name+"]", nil, b[j])
		}
	}
	if slices.Equal(an, bn) || len(an) != len(bn) {
		return
	}
	// The same elements in another order: the order is behaviour too.
	*out = append(*out, Difference{Path: path + " (order)", Kubelet: strings.Join(an, ","), Nodestate: strings.Join(bn, ",")})
}

func names(l []any) ([]string, bool) {
	out := make([]string, len(l))
	seen := map[string]bool{}
	for i, e := range l {
		n := elemName(e, i)
		if n == strconv.Itoa(i) || seen[n] {
			return nil, false
		}
		seen[n] = true
		out[i] = n
	}
	return out, true
}

func indexOf(l []string, s string) int {
	for i, x := range l {
		if x == s {
			return i
		}
	}
	return -1
}

// render is v as compact JSON, "" for nil.
func render(v value) string {
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
