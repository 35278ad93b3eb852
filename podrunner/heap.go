package podrunner

import "time"

// wakeHeap orders the pods with something due by wake time, then by the
// order they were added, so that pods due at one instant sync in a fixed
// order. Each pod knows its index (-1 when it is not in the heap).
type wakeHeap []*podEntry

func (h wakeHeap) less(i, j int) bool {
	if !h[i].wake.Equal(h[j].wake) {
		return h[i].wake.Before(h[j].wake)
	}
	return h[i].seq < h[j].seq
}

func (h wakeHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].hidx, h[j].hidx = i, j
}

func (h wakeHeap) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !h.less(j, i) {
			break
		}
		h.swap(i, j)
		j = i
	}
}

func (h wakeHeap) down(i int) bool {
	i0, n := i, len(h)
	for {
		l := 2*i + 1
		if l >= n || l < 0 {
			break
		}
		j := l
		if r := l + 1; r < n && h.less(r, l) {
			j = r
		}
		if !h.less(j, i) {
			break
		}
		h.swap(i, j)
		i = j
	}
	return i > i0
}

// set puts p into the heap at wake w, moves it, or takes it out when w is
// zero.
func (h *wakeHeap) set(p *podEntry, w time.Time) {
	p.wake = w
	switch {
	case w.IsZero() && p.hidx >= 0:
		h.remove(p)
	case w.IsZero():
	case p.hidx < 0:
		p.hidx = len(*h)
		*h = append(*h, p)
		h.up(p.hidx)
	default:
		if !h.down(p.hidx) {
			h.up(p.hidx)
		}
	}
}

func (h *wakeHeap) remove(p *podEntry) {
	i, last := p.hidx, len(*h)-1
	if i != last {
		h.swap(i, last)
	}
	(*h)[last] = nil
	*h = (*h)[:last]
	p.hidx = -1
	if i != last {
		if !h.down(i) {
			h.up(i)
		}
	}
}
