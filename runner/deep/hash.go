package deep

import (
	"math"
	"math/bits"
	"reflect"
	"slices"
)

// Hasher accumulates a 128-bit fingerprint. The zero Hasher is ready.
type Hasher struct {
	a, b uint64
	n    uint64             // words written
	seen map[uintptr]uint64 // pointers met in the current Value, by order of meeting
	path []reflect.Value    // scratch
}

// Fingerprint is a 128-bit hash of a state.
type Fingerprint [2]uint64

const (
	primeA = 0x9E3779B97F4A7C15
	primeB = 0xC2B2AE3D27D4EB4F
)

// Word mixes one word into the fingerprint.
func (h *Hasher) Word(w uint64) {
	h.n++
	h.a = bits.RotateLeft64((h.a^w)*primeA, 31) + h.n
	h.b = bits.RotateLeft64((h.b+w)*primeB, 27) ^ (h.n * primeA)
}

// String mixes s (its length, then its bytes) into the fingerprint.
func (h *Hasher) String(s string) {
	h.Word(uint64(len(s)))
	for len(s) > 0 {
		var w uint64
		for i := 0; i < 8 && i < len(s); i++ {
			w |= uint64(s[i]) << (8 * i)
		}
		h.Word(w)
		s = s[min(8, len(s)):]
	}
}

// Sum returns the fingerprint of what was written.
func (h *Hasher) Sum() Fingerprint {
	return Fingerprint{avalanche(h.a ^ h.n), avalanche(h.b + h.n*primeB)}
}

func avalanche(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// Value mixes a canonical encoding of v into the fingerprint: its type's
// structure and every value it reaches (unexported fields included), maps
// in an order of their own, pointers by their targets (a pointer met
// again within v by the order it was first met). Funcs and channels count
// only as nil or not.
func (h *Hasher) Value(v any) {
	if h.seen == nil {
		h.seen = map[uintptr]uint64{}
	}
	clear(h.seen)
	h.value(reflect.ValueOf(v))
}

func (h *Hasher) value(v reflect.Value) {
	switch v.Kind() {
	case reflect.Invalid:
		h.Word(0)
	case reflect.Bool:
		if v.Bool() {
			h.Word(1)
		} else {
			h.Word(0)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		h.Word(uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		h.Word(v.Uint())
	case reflect.Float32, reflect.Float64:
		h.Word(math.Float64bits(v.Float()))
	case reflect.Complex64, reflect.Complex128:
		c := v.Complex()
		h.Word(math.Float64bits(real(c)))
		h.Word(math.Float64bits(imag(c)))
	case reflect.String:
		h.String(v.String())
	case reflect.Struct:
		h.Word(uint64(v.NumField()))
		for i := 0; i < v.NumField(); i++ {
			h.value(v.Field(i))
		}
	case reflect.Array, reflect.Slice:
		if v.Kind() == reflect.Slice && v.IsNil() {
			h.Word(math.MaxUint64)
			return
		}
		h.Word(uint64(v.Len()))
		for i := 0; i < v.Len(); i++ {
			h.value(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() {
			h.Word(math.MaxUint64)
			return
		}
		// Each entry hashed on its own, the entries' fingerprints sorted:
		// the same map hashes the same whatever order Go iterates it in.
		entries := make([]Fingerprint, 0, v.Len())
		it := v.MapRange()
		for it.Next() {
			var e Hasher
			e.seen = h.seen
			e.value(it.Key())
			e.value(it.Value())
			entries = append(entries, e.Sum())
		}
		slices.SortFunc(entries, func(x, y Fingerprint) int {
			switch {
			case x[0] != y[0]:
				return cmpUint(x[0], y[0])
			default:
				return cmpUint(x[1], y[1])
			}
		})
		h.Word(uint64(len(entries)))
		for _, e := range entries {
			h.Word(e[0])
			h.Word(e[1])
		}
	case reflect.Pointer:
		if v.IsNil() {
			h.Word(math.MaxUint64)
			return
		}
		if i, ok := h.seen[v.Pointer()]; ok {
			h.Word(math.MaxUint64 - 1)
			h.Word(i)
			return
		}
		h.seen[v.Pointer()] = uint64(len(h.seen))
		h.value(v.Elem())
	case reflect.Interface:
		if v.IsNil() {
			h.Word(math.MaxUint64)
			return
		}
		e := v.Elem()
		h.String(e.Type().String())
		h.value(e)
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		if v.IsNil() {
			h.Word(0)
		} else {
			h.Word(1)
		}
	}
}

func cmpUint(a, b uint64) int {
	if a < b {
		return -1
	}
	return 1
}
