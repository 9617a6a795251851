package trace

import "unsafe"

// Driver values without allocations. A driver.Value is an interface, and
// storing an int64 (256 or more) or a string in one allocates a copy of it
// on the heap: the Writer bound six such values per event and five per
// message, and those allocations and the garbage collection they caused
// were about 6% of its CPU time. The helpers below make an interface
// whose value pointer points at the int64 or string where it already
// lives (a batch's row, a message's aggregate, a reused slot), as the
// runtime itself would have pointed at its copy.
//
// They rely on the layout of an empty interface (a type word, then a
// pointer to the value for types that are not pointer-shaped, which int64
// and string are not) and on the value staying put and unchanged while
// the driver may read it: the Writer's values are read by the one
// statement execution they are bound for, and their slots are set again
// before the next one. TestBoxAt checks the layout.

// eface is the layout of an empty interface.
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

var int64Type, stringType = typeWord(int64(0)), typeWord("")

func typeWord(v any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&v)).typ }

// int64At returns *p as an interface value that reads p.
func int64At(p *int64) any {
	var v any
	*(*eface)(unsafe.Pointer(&v)) = eface{int64Type, unsafe.Pointer(p)}
	return v
}

// nullInt64At is int64At, or nil (SQL NULL) if *p is none.
func nullInt64At(p *int64, none int64) any {
	if *p == none {
		return nil
	}
	return int64At(p)
}

// stringAt returns *p as an interface value that reads p.
func stringAt(p *string) any {
	var v any
	*(*eface)(unsafe.Pointer(&v)) = eface{stringType, unsafe.Pointer(p)}
	return v
}
