package events

// lru is a fixed-capacity least-recently-used cache with the promotion rules of
// k8s.io/utils/lru (a get promotes, an add inserts or updates and promotes, the least recently
// used entry is evicted when a new key does not fit). Entries live in one slice linked by index
// and are found through a map from a 64-bit hash of the key (computed by the caller, which
// shares the work between its keys) to the first entry with that hash
// (entries sharing a hash are chained and compared in full, so a collision costs a comparison,
// never a wrong answer). The keys are large structs of strings; indexing them by hash keeps the
// map's keys small, so once the cache is full an insertion reuses the evicted slot and
// allocates nothing, and a value that holds a slice keeps its capacity across reuse.
type lru[K comparable, V any] struct {
	capacity int
	index    map[uint64]int32
	entries  []lruEntry[K, V]
	head     int32 // most recently used, -1 when empty
	tail     int32 // least recently used, -1 when empty
	n        int
}

type lruEntry[K comparable, V any] struct {
	key        K
	val        V
	sum        uint64
	prev, next int32 // recency list
	chain      int32 // next entry with the same hash, -1 at the end
}

func newLRU[K comparable, V any](capacity int) lru[K, V] {
	return lru[K, V]{
		capacity: capacity,
		index:    make(map[uint64]int32),
		head:     -1,
		tail:     -1,
	}
}

// len returns the number of entries.
func (l *lru[K, V]) len() int { return l.n }

// find returns the index of k's entry, or -1.
func (l *lru[K, V]) find(k K, sum uint64) int32 {
	i, ok := l.index[sum]
	if !ok {
		return -1
	}
	for ; i >= 0; i = l.entries[i].chain {
		if l.entries[i].key == k {
			return i
		}
	}
	return -1
}

// get returns the value for k, whose hash is sum, and promotes it.
func (l *lru[K, V]) get(k K, sum uint64) (*V, bool) {
	i := l.find(k, sum)
	if i < 0 {
		return nil, false
	}
	l.promote(i)
	return &l.entries[i].val, true
}

// slot returns the entry for k, whose hash is sum, inserting it (evicting the least recently used entry if the
// cache is full) when missing, and promotes it. fresh is true when the entry was inserted; its
// value then holds whatever the reused slot held, and the caller must reset it.
func (l *lru[K, V]) slot(k K, sum uint64) (v *V, fresh bool) {
	if i := l.find(k, sum); i >= 0 {
		l.promote(i)
		return &l.entries[i].val, false
	}
	var i int32
	if len(l.entries) < l.capacity {
		l.entries = append(l.entries, lruEntry[K, V]{})
		i = int32(len(l.entries) - 1)
		l.n++
	} else {
		i = l.tail
		l.unlink(i)
		l.unindex(i)
	}
	e := &l.entries[i]
	e.key, e.sum = k, sum
	if first, ok := l.index[sum]; ok {
		e.chain = first
	} else {
		e.chain = -1
	}
	l.index[sum] = i
	l.pushFront(i)
	return &e.val, true
}

// unindex removes entry i from its hash chain.
func (l *lru[K, V]) unindex(i int32) {
	e := &l.entries[i]
	first := l.index[e.sum]
	if first == i {
		if e.chain < 0 {
			delete(l.index, e.sum)
		} else {
			l.index[e.sum] = e.chain
		}
		return
	}
	for j := first; j >= 0; j = l.entries[j].chain {
		if l.entries[j].chain == i {
			l.entries[j].chain = e.chain
			return
		}
	}
}

func (l *lru[K, V]) promote(i int32) {
	if l.head == i {
		return
	}
	l.unlink(i)
	l.pushFront(i)
}

func (l *lru[K, V]) unlink(i int32) {
	e := &l.entries[i]
	if e.prev >= 0 {
		l.entries[e.prev].next = e.next
	} else {
		l.head = e.next
	}
	if e.next >= 0 {
		l.entries[e.next].prev = e.prev
	} else {
		l.tail = e.prev
	}
	e.prev, e.next = -1, -1
}

func (l *lru[K, V]) pushFront(i int32) {
	e := &l.entries[i]
	e.prev = -1
	e.next = l.head
	if l.head >= 0 {
		l.entries[l.head].prev = i
	}
	l.head = i
	if l.tail < 0 {
		l.tail = i
	}
}
