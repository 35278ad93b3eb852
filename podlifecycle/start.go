package podlifecycle

import (
	"strings"
	"time"

	"github.com/nodestate/nodestate/containerstate"
	v1 "k8s.io/api/core/v1"
)

// prune carries out section 4.1 step 3: it removes the init container
// instances the plan prunes. The machine drops them at once, as it does
// with a purge: the next sync's status no longer has them, as the
// kubelet's does not.
func (m *Machine) prune(res *Result) {
	for _, r := range m.plan.prune {
		c := &m.ctrs[r.c]
		if c.instance(r.id) == nil {
			continue
		}
		res.Actions = append(res.Actions, Action{Kind: RemoveContainer, Container: c.name, ContainerKind: c.kind, ContainerID: r.id})
		c.remove(r.id)
		m.retire(c.name, r.id)
	}
}

// startPhase is the rest of SyncPod once the kills are over (section 4.1
// steps 3, 5 to 7): the prune, then the ephemeral, init and regular starts.
// It returns the earliest crash-loop expiry that held a start.
func (m *Machine) startPhase(now time.Time, res *Result) (crashExpiry time.Time) {
	p := &m.plan
	m.prune(res)
	start := func(c *ctr) bool {
		if c.busyAtPlan {
			// Its start was under way when the plan was decided: done for
			// this plan, even if it was answered while the kills ran.
			return true
		}
		if n := newest(c); n != nil && n.kill.active && n.state != containerstate.RuntimeExited {
			return true // started once the kill is done
		}
		ok, until := m.start(c, now, res)
		crashExpiry = earliest(crashExpiry, until)
		return ok
	}
	es := m.ephemerals()
	for _, i := range p.ephToStart {
		start(&es[i])
	}
	is := m.inits()
	for _, i := range p.initToStart {
		if !start(&is[i]) && !is[i].sidecar {
			break // a regular init container that cannot start ends the sync (4.1 step 6)
		}
	}
	rs := m.regulars()
	for _, i := range p.toStart {
		start(&rs[i])
	}
	m.clearPurgedRC()
	return crashExpiry
}

// clearPurgedRC ends the validity of the purged instances' restart
// counts: only the starts of the sync that purged them read them; later
// ones find no instance (the purge removed their logs too).
func (m *Machine) clearPurgedRC() {
	for i := range m.ctrs {
		m.ctrs[i].hasPurgedRC = false
	}
}

// defaultPullPolicy is the API server's default imagePullPolicy (section 5):
// Always for the tag latest, or for neither tag nor digest, else
// IfNotPresent, also for a reference it cannot parse (it ignores the parse
// error and so sees no tag).
func defaultPullPolicy(image string) v1.PullPolicy {
	tag, digest, ok := imageTag(image)
	if ok && (tag == "latest" || tag == "" && digest == "") {
		return v1.PullAlways
	}
	return v1.PullIfNotPresent
}

// imageTag parses image as the kubelet's and the API server's reference
// parser does, with docker.io's normalization: the tag and digest it has,
// and ok false when it is not a valid reference.
func imageTag(image string) (tag, digest string, ok bool) {
	name := image
	if i := strings.IndexByte(name, '@'); i >= 0 {
		name, digest = name[:i], name[i+1:]
		if !validDigest(digest) {
			return "", "", false
		}
	}
	if i := strings.LastIndexByte(name, ':'); i > strings.LastIndexByte(name, '/') {
		name, tag = name[:i], name[i+1:]
		if !validTag(tag) {
			return "", "", false
		}
	}
	if len(image) == 64 && lowerHex(image) {
		return "", "", false // a bare image ID is no repository name
	}
	// The repository path once normalized: the name after a domain, the
	// whole name under docker.io, library/ before a docker.io name of one
	// component; at most 255 characters. The first component is the
	// domain when it has a dot or a colon, is localhost or has upper case;
	// when it is no host name, it is the path's first component.
	path, n := name, len(name)
	if i := strings.IndexByte(name, '/'); i >= 0 && (strings.ContainsAny(name[:i], ".:") || name[:i] == "localhost" || strings.ToLower(name[:i]) != name[:i]) {
		if domain := name[:i]; validDomain(domain) {
			path, n = name[i+1:], len(name)-i-1
			if (domain == "docker.io" || domain == "index.docker.io") && strings.IndexByte(path, '/') < 0 {
				n += len("library/")
			}
		}
	} else if i < 0 {
		n += len("library/")
	}
	if n > 255 || !validPath(path) {
		return "", "", false
	}
	return tag, digest, true
}

// validDigest reports whether d is a digest of an algorithm the parser
// knows, with its length of lowercase hex.
func validDigest(d string) bool {
	alg, hex, _ := strings.Cut(d, ":")
	n := 0
	switch alg {
	case "sha256":
		n = 64
	case "sha384":
		n = 96
	case "sha512":
		n = 128
	}
	return n > 0 && len(hex) == n && lowerHex(hex)
}

// The grammar of image references (the distribution reference format),
// checked without regular expressions: a pull policy is defaulted at
// every start, which must not allocate.

// lowerHex reports whether s is made of 0-9 and a-f only.
func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// validTag: a word character, then at most 127 word characters, dots and
// dashes.
func validTag(t string) bool {
	if len(t) == 0 || len(t) > 128 || !word(t[0]) {
		return false
	}
	for i := 1; i < len(t); i++ {
		if c := t[i]; !word(c) && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

func word(c byte) bool { return alnum(c) || 'A' <= c && c <= 'Z' || c == '_' }

func alnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

// validPath: components of lower-case letters and digits joined by one
// '.', one '_', "__" or dashes, separated by '/'.
func validPath(p string) bool {
	for {
		comp, rest, more := strings.Cut(p, "/")
		if !validComponent(comp) {
			return false
		}
		if !more {
			return true
		}
		p = rest
	}
}

func validComponent(c string) bool {
	if len(c) == 0 || !alnum(c[0]) || !alnum(c[len(c)-1]) {
		return false
	}
	for i := 1; i < len(c); {
		if alnum(c[i]) {
			i++
			continue
		}
		j := i
		for j < len(c) && !alnum(c[j]) {
			j++
		}
		switch sep := c[i:j]; {
		case sep == "." || sep == "_" || sep == "__":
		case strings.Trim(sep, "-") == "":
		default:
			return false
		}
		i = j
	}
	return true
}

// validDomain: host names (labels of letters, digits and inner dashes,
// joined by dots) or an IPv6 address in brackets, with an optional port.
func validDomain(d string) bool {
	port := ""
	if strings.HasPrefix(d, "[") {
		end := strings.IndexByte(d, ']')
		if end < 2 {
			return false
		}
		for i := 1; i < end; i++ {
			if c := d[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' || c == ':') {
				return false
			}
		}
		port = d[end+1:]
	} else {
		host := d
		if i := strings.IndexByte(d, ':'); i >= 0 {
			host, port = d[:i], d[i:]
		}
		for {
			label, rest, more := strings.Cut(host, ".")
			if !validLabel(label) {
				return false
			}
			if !more {
				break
			}
			host = rest
		}
	}
	return port == "" || port[0] == ':' && len(port) > 1 && strings.Trim(port[1:], "0123456789") == ""
}

// validLabel: letters and digits, with dashes inside.
func validLabel(l string) bool {
	if len(l) == 0 || !hostChar(l[0]) || !hostChar(l[len(l)-1]) {
		return false
	}
	for i := 1; i < len(l)-1; i++ {
		if !hostChar(l[i]) && l[i] != '-' {
			return false
		}
	}
	return true
}

func hostChar(c byte) bool { return alnum(c) || 'A' <= c && c <= 'Z' }

// start is one StartContainer (section 4.2): crash-loop back-off, the image
// under its pull policy and pull back-off, then create and start. It
// reports whether the start was issued (or is already under way) and the
// crash-loop expiry that held it.
func (m *Machine) start(c *ctr, now time.Time, res *Result) (bool, time.Time) {
	if c.inFlight {
		return true, time.Time{}
	}
	fp := c.fieldPath
	// 4.2 step 1: crash-loop back-off against the newest exited instance.
	var ref time.Time
	switch {
	case c.restartAfterKill:
		ref = c.backoffRef
	case c.removedByReset:
	default:
		for j := range c.insts {
			if c.insts[j].state == containerstate.RuntimeExited {
				ref = c.insts[j].finished
				break
			}
		}
		if len(c.insts) == 0 && c.hasPurgedRC {
			ref = c.purgedRef // the status the purging sync began with still had it
		}
	}
	if !ref.IsZero() {
		if delay, until, blocked := m.crash.CrashLoop(m.crashKeyOf(c), ref, now); blocked {
			if c.msgs.backOff == "" {
				c.msgs.backOff = CrashLoopBackOffMessage(c.name, m.name, m.ns, m.uid)
			}
			res.Events = append(res.Events, warning(ReasonBackOff, c.msgs.backOff, fp))
			ev := containerstate.BackOffEvent(now, delay, c.name, m.name, m.ns, m.uid)
			c.setStartErr(ev.Reason, ev.Message)
			return false, until
		}
	}
	// Section 5: the image.
	img := c.spec.Image
	policy := c.spec.ImagePullPolicy
	if policy == "" {
		policy = defaultPullPolicy(img)
	}
	pull := false
	switch {
	case policy != v1.PullAlways && m.images[img]:
		res.Events = append(res.Events, normal(ReasonPulled, c.msgs.present.of(img, m.opts.EnsureSecretPulledImages, AlreadyPresentMessage), fp))
	case policy == v1.PullNever:
		ev := containerstate.NeverPullEvent(now, img)
		res.Events = append(res.Events, warning(ReasonErrImageNeverPull, ev.Message, fp),
			warning(ReasonFailed, ErrorMessage(ev.Reason), fp))
		c.setStartErr(ev.Reason, ev.Message)
		m.pendingErr = true
		return false, time.Time{}
	default:
		if m.pulls.ImagePull(containerstate.ImagePullKey(m.uid, img), now) {
			ev := containerstate.PullBackOffEvent(now, img, c.lastPull.Reason, c.lastPull.Message)
			res.Events = append(res.Events, normal(ReasonBackOff, PullBackOffMessage(img), fp),
				warning(ReasonFailed, ErrorMessage(ev.Reason), fp))
			c.setStartErr(ev.Reason, ev.Message)
			m.pendingErr = true
			return false, time.Time{}
		}
		res.Events = append(res.Events, normal(ReasonPulling, c.msgs.pulling.of(img, false, pullingMessage), fp))
		pull = true
	}
	if pull {
		res.Actions = append(res.Actions, Action{Kind: PullImage, Container: c.name, ContainerKind: c.kind, Image: img, PullPolicy: policy})
	}
	// 4.2 step 3: the newest instance's restart count + 1.
	rc := int32(0)
	if n := newest(c); n != nil {
		rc = n.restartCount + 1
	} else if c.hasPurgedRC {
		rc = c.purgedRC
	}
	c.startRC = rc
	res.Actions = append(res.Actions, Action{Kind: StartContainer, Container: c.name, ContainerKind: c.kind,
		Image: img, PullPolicy: policy, RestartCount: rc})
	c.postStart = c.spec.Lifecycle != nil && c.spec.Lifecycle.PostStart != nil
	if c.postStart {
		res.Actions = append(res.Actions, Action{Kind: RunHook, Container: c.name, ContainerKind: c.kind, Hook: PostStart})
	}
	c.inFlight, c.restartAfterKill, c.backoffRef = true, false, time.Time{}
	return true, time.Time{}
}

// crashKeyOf returns the crash-loop back-off key of c's spec, computed
// again only for a spec whose name, image or resources differ from the one
// it was computed for: the key hashes the resources' text, which costs a
// dozen allocations.
func (m *Machine) crashKeyOf(c *ctr) string {
	if c.crashKeySpec == nil || c.crashKeySpec != c.spec && !sameKeyFields(c.crashKeySpec, c.spec) {
		c.crashKey = containerstate.CrashLoopKey(m.name, m.ns, m.uid, c.spec)
	}
	c.crashKeySpec = c.spec
	return c.crashKey
}

// sameKeyFields reports whether a and b have the same name, image and
// resources, value for value (so the same text of them).
func sameKeyFields(a, b *v1.Container) bool {
	if a.Name != b.Name || a.Image != b.Image || !sameListExact(a.Resources.Limits, b.Resources.Limits) ||
		!sameListExact(a.Resources.Requests, b.Resources.Requests) || (a.Resources.Claims == nil) != (b.Resources.Claims == nil) ||
		len(a.Resources.Claims) != len(b.Resources.Claims) {
		return false
	}
	for i := range a.Resources.Claims {
		if a.Resources.Claims[i] != b.Resources.Claims[i] {
			return false
		}
	}
	return true
}

// sameListExact reports whether two lists hold the same quantities, in the
// same representation.
func sameListExact(a, b v1.ResourceList) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for name, q := range a {
		if r, ok := b[name]; !ok || q != r {
			return false
		}
	}
	return true
}

// ctrMessages are a container's event messages built before.
type ctrMessages struct {
	backOff          string // CrashLoopBackOffMessage
	present, pulling imageMessage
}

// imageMessage is a message about an image, kept for the next one about
// the same image.
type imageMessage struct {
	image, msg string
	flag       bool
}

func (c *imageMessage) of(image string, flag bool, build func(string, bool) string) string {
	if c.msg == "" || c.image != image || c.flag != flag {
		c.image, c.flag, c.msg = image, flag, build(image, flag)
	}
	return c.msg
}

func pullingMessage(image string, _ bool) string { return PullingMessage(image) }
