package explore

import (
	"fmt"
	"math/bits"
	"syscall"
	"unsafe"

	"github.com/dmxlab/dmx/runner/deep"
)

// stateTable is the set of states a pass visited, each with what the pass
// remembers of it (seen). It is what bounds the size of an exhaustive
// search, so it is lean:
//
//   - open addressing with linear probing over flat slots of 24 bytes (the
//     128-bit fingerprint and seen), filled up to 80 % and grown by a
//     quarter, so about 33 bytes per state; a Go map took about 47;
//   - split by the fingerprint's top byte into tableParts parts that grow
//     one at a time, so that growing never holds two copies of the whole
//     table, only of one part;
//   - a large part lives outside the Go heap, in an anonymous mapping: the
//     garbage collector lets the heap grow to twice what is live before it
//     collects (GOGC=100), and the table, nearly all that is live, would
//     double the resident size of a search for nothing. Its slots hold no
//     pointers, so the collector need not see them.
//
// No state is ever dropped or merged with another: the table is exact up
// to the fingerprints, as the map was. The fingerprint {0, 0} marks an
// empty slot; a state whose fingerprint it is gets {0, 1} instead, one
// more 128-bit collision of the kind fingerprints already risk.
type stateTable struct {
	parts [tableParts]tablePart
	n     int64 // states held
}

const (
	tableParts = 256
	// partStart is a part's first number of slots (a page of them).
	partStart = 4096 / slotSize
	// mapAbove is the size in bytes above which a part is mapped outside
	// the heap; smaller ones (all of a small search's) stay in it, which
	// costs no system call.
	mapAbove = 1 << 16
	slotSize = int(unsafe.Sizeof(slot{}))
)

type tablePart struct {
	slots  []slot
	mapped []byte // the mapping slots live in; nil when they are in the heap
	n      int
}

type slot struct {
	fp   deep.Fingerprint
	seen seen
}

// get returns what the table holds for fp and whether it holds fp.
func (t *stateTable) get(fp deep.Fingerprint) (seen, bool) {
	fp = nonZero(fp)
	p := &t.parts[fp[0]>>56]
	if len(p.slots) == 0 {
		return seen{}, false
	}
	for i := p.home(fp); ; i = p.next(i) {
		switch s := &p.slots[i]; s.fp {
		case fp:
			return s.seen, true
		case deep.Fingerprint{}:
			return seen{}, false
		}
	}
}

// put stores sn for fp, adding fp if the table does not hold it.
func (t *stateTable) put(fp deep.Fingerprint, sn seen) error {
	fp = nonZero(fp)
	p := &t.parts[fp[0]>>56]
	if (p.n+1)*5 > len(p.slots)*4 {
		if err := p.grow(); err != nil {
			return err
		}
	}
	for i := p.home(fp); ; i = p.next(i) {
		switch s := &p.slots[i]; s.fp {
		case fp:
			s.seen = sn
			return nil
		case deep.Fingerprint{}:
			s.fp, s.seen = fp, sn
			p.n++
			t.n++
			return nil
		}
	}
}

// Len returns the number of states held.
func (t *stateTable) Len() int64 { return t.n }

// Bytes returns the memory the slots take.
func (t *stateTable) Bytes() int64 {
	var b int64
	for i := range t.parts {
		b += int64(len(t.parts[i].slots) * slotSize)
	}
	return b
}

// free empties the table and gives its memory back.
func (t *stateTable) free() {
	for i := range t.parts {
		t.parts[i].release()
	}
	t.n = 0
}

func nonZero(fp deep.Fingerprint) deep.Fingerprint {
	if fp == (deep.Fingerprint{}) {
		return deep.Fingerprint{0, 1}
	}
	return fp
}

// home is fp's first slot: the low word scaled to the part's size (the
// top byte of the high word chose the part).
func (p *tablePart) home(fp deep.Fingerprint) int {
	hi, _ := bits.Mul64(fp[1], uint64(len(p.slots)))
	return int(hi)
}

func (p *tablePart) next(i int) int {
	if i++; i == len(p.slots) {
		return 0
	}
	return i
}

// grow moves the part to slots a quarter more (a page at first).
func (p *tablePart) grow() error {
	size := max(partStart, len(p.slots)+len(p.slots)/4)
	old, oldMapped := p.slots, p.mapped
	if err := p.alloc(size); err != nil {
		return err
	}
	for i := range old {
		s := &old[i]
		if s.fp == (deep.Fingerprint{}) {
			continue
		}
		j := p.home(s.fp)
		for p.slots[j].fp != (deep.Fingerprint{}) {
			j = p.next(j)
		}
		p.slots[j] = *s
	}
	if oldMapped != nil {
		// Unmapping memory the table no longer uses cannot fail but
		// for a bad argument; the error would leak it, nothing worse.
		_ = syscall.Munmap(oldMapped)
	}
	return nil
}

// alloc gives the part size empty slots, in the heap or mapped.
func (p *tablePart) alloc(size int) error {
	bytes := size * slotSize
	if bytes <= mapAbove {
		p.slots, p.mapped = make([]slot, size), nil
		return nil
	}
	// Whole pages: the slots that fit in them.
	bytes = (bytes + 4095) &^ 4095
	mem, err := syscall.Mmap(-1, 0, bytes, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return fmt.Errorf("explore: map %d MB for the visited states: %w", bytes>>20, err)
	}
	p.mapped = mem
	p.slots = unsafe.Slice((*slot)(unsafe.Pointer(unsafe.SliceData(mem))), bytes/slotSize)
	return nil
}

func (p *tablePart) release() {
	if p.mapped != nil {
		_ = syscall.Munmap(p.mapped)
	}
	*p = tablePart{}
}
