package podrunner

import (
	"net/netip"
)

// ipPool hands out the addresses of a pod CIDR, from the second host
// address on (the first is the node's bridge, as CNI's host-local plugin
// leaves it), lowest free first, never the broadcast address.
type ipPool struct {
	prefix netip.Prefix
	used   map[netip.Addr]bool
}

// parsePodCIDR parses an IPv4 range of at least 4 addresses.
func parsePodCIDR(s string) (netip.Prefix, bool) {
	p, err := netip.ParsePrefix(s)
	if err != nil || !p.Addr().Is4() || p.Bits() > 30 {
		return netip.Prefix{}, false
	}
	return p.Masked(), true
}

func newIPPool(p netip.Prefix) *ipPool { return &ipPool{prefix: p, used: map[netip.Addr]bool{}} }

func (p *ipPool) get() (string, bool) {
	for a := p.prefix.Addr().Next().Next(); p.prefix.Contains(a.Next()); a = a.Next() {
		if !p.used[a] {
			p.used[a] = true
			return a.String(), true
		}
	}
	return "", false
}

// put gives ip back; an address of another range (from before the pod
// CIDR changed) is ignored.
func (p *ipPool) put(ip string) {
	if a, err := netip.ParseAddr(ip); err == nil && p.prefix.Contains(a) {
		delete(p.used, a)
	}
}
