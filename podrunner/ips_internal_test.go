package podrunner

import (
	"net/netip"
	"slices"
	"testing"
)

// TestIPPool: addresses from the second host address on, lowest free first,
// never the network or broadcast address; freed ones are reused; an
// address of another range given back is ignored.
func TestIPPool(t *testing.T) {
	p := newIPPool(netip.MustParsePrefix("10.1.2.0/29"))
	var got []string
	for {
		ip, ok := p.get()
		if !ok {
			break
		}
		got = append(got, ip)
	}
	if want := []string{"10.1.2.2", "10.1.2.3", "10.1.2.4", "10.1.2.5", "10.1.2.6"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	p.put("10.1.2.4")
	p.put("10.9.9.9")
	p.put("not an address")
	if ip, ok := p.get(); !ok || ip != "10.1.2.4" {
		t.Fatalf("a freed address is handed out again: %q %v", ip, ok)
	}
	if _, ok := p.get(); ok {
		t.Fatal("an address beyond the range")
	}
}
