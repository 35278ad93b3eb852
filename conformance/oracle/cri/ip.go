package cri

import (
	"net/netip"
)

// ipPool hands out the addresses of a prefix in turn, as a CNI plugin's
// host-local allocator does: each new sandbox gets the address after the
// one handed out last that is free, so an address given back is not handed
// out again at once. For an IPv4 prefix of /30 or wider the network and
// broadcast addresses are left out. The zero value is an empty pool.
type ipPool struct {
	prefix netip.Prefix
	last   netip.Addr
	used   map[netip.Addr]bool
}

func newIPPool(p netip.Prefix) ipPool {
	return ipPool{prefix: p, last: p.Addr(), used: map[netip.Addr]bool{}}
}

// hostBits is the number of address bits a prefix leaves free.
func hostBits(p netip.Prefix) int { return p.Addr().BitLen() - p.Bits() }

// usable reports whether a of the pool's prefix may be handed out.
func (p *ipPool) usable(a netip.Addr) bool {
	if !p.prefix.Contains(a) {
		return false
	}
	if a.Is4() && hostBits(p.prefix) >= 2 {
		// The network and broadcast addresses.
		if a == p.prefix.Addr() || !p.prefix.Contains(a.Next()) {
			return false
		}
	}
	return true
}

// get returns a free address, or false when every address is in use.
func (p *ipPool) get() (netip.Addr, bool) {
	if !p.prefix.IsValid() {
		return netip.Addr{}, false
	}
	a := p.last
	// At most 2^16 steps: a bigger prefix has free addresses near the
	// last one long before, unless 65536 sandboxes exist at once.
	limit := 1 << 16
	if hb := hostBits(p.prefix); hb < 16 {
		limit = 1 << hb
	}
	for i := 0; i < limit; i++ {
		a = a.Next()
		if !p.prefix.Contains(a) {
			a = p.prefix.Addr()
		}
		if p.usable(a) && !p.used[a] {
			p.used[a], p.last = true, a
			return a, true
		}
	}
	return netip.Addr{}, false
}

// put gives a back.
func (p *ipPool) put(a netip.Addr) { delete(p.used, a) }
