package events

// lru is a fixed-capacity least-recently-used cache with the promotion rules of
// k8s.io/utils/lru (a get promotes, an add inserts or updates and promotes, the least recently
// used entry is evicted when a new key does not fit). Entries live in one slice linked by index,
// so once the cache is full an insertion reuses the evicted slot and allocates nothing; a value
// that holds a slice keeps its capacity across reuse.
type lru[K comparable, V any] struct {
	capacity int
	index    map[K]int32
	entries  []lruEntry[K, V]
	head     int32 // most recently used, -1 when empty
	tail     int32 // least recently used, -1 when empty
}

type lruEntry[K comparable, V any] struct {
	key        K
	val        V
	prev, next int32
}

func newLRU[K comparable, V any](capacity int) lru[K, V] {
	return lru[K, V]{
		capacity: capacity,
		index:    make(map[K]int32),
		head:     -1,
		tail:     -1,
	}
}

// len returns the number of entries.
func (l *lru[K, V]) len() int { return len(l.index) }

// get returns the value for k and promotes it.
func (l *lru[K, V]) get(k K) (*V, bool) {
	i, ok := l.index[k]
	if !ok {
		return nil, false
	}
	l.promote(i)
	return &l.entries[i].val, true
}

// peek returns the value for k without promoting it.
func (l *lru[K, V]) peek(k K) (*V, bool) {
	i, ok := l.index[k]
	if !ok {
		return nil, false
	}
	return &l.entries[i].val, true
}

// slot returns the entry for k, inserting it (evicting the least recently used entry if the
// cache is full) when missing, and promotes it. fresh is true when the entry was inserted; its
// value then holds whatever the reused slot held, and the caller must reset it.
func (l *lru[K, V]) slot(k K) (v *V, fresh bool) {
	if i, ok := l.index[k]; ok {
		l.promote(i)
		return &l.entries[i].val, false
	}
	var i int32
	if len(l.entries) < l.capacity {
		l.entries = append(l.entries, lruEntry[K, V]{})
		i = int32(len(l.entries) - 1)
	} else {
		i = l.tail
		l.unlink(i)
		delete(l.index, l.entries[i].key)
	}
	l.entries[i].key = k
	l.index[k] = i
	l.pushFront(i)
	return &l.entries[i].val, true
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
