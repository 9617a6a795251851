package deep

import (
	"fmt"
	"reflect"
	"sync"
	"unsafe"
)

// Copy returns a deep copy of v: every struct, array, slice, map, pointer
// and interface value v reaches is copied, unexported fields included, and
// pointers that share a target in v share its copy. Map keys are copied as
// they are (they are values). A func or a channel that is not nil cannot
// be copied: the error names where it is.
func Copy[T any](v T) (T, error) {
	c := copiers.Get().(*copier)
	defer func() {
		clear(c.seen)
		copiers.Put(c)
	}()
	src := reflect.ValueOf(&v).Elem()
	dst := reflect.New(src.Type()).Elem()
	if err := c.copy(dst, src); err != nil {
		var zero T
		return zero, fmt.Errorf("value%s", err)
	}
	return dst.Interface().(T), nil
}

type ptrKey struct {
	p uintptr
	t reflect.Type
}

type copier struct {
	seen map[ptrKey]reflect.Value // copies of the pointers met so far
}

// copiers recycles copiers: a search copies machines millions of times.
var copiers = sync.Pool{New: func() any { return &copier{seen: map[ptrKey]reflect.Value{}} }}

// open returns v as a value that can be read and set even if it was
// reached through an unexported field. v must be addressable.
func open(v reflect.Value) reflect.Value {
	if v.CanSet() {
		return v
	}
	return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
}

// uncopyable says where in a value a func or channel is: the path is
// built as the error goes up, so that a copy that succeeds builds none.
type uncopyable struct {
	path string // ".field[2]...", from the value copied
	kind reflect.Kind
}

func (e *uncopyable) Error() string {
	return fmt.Sprintf("%s is a %s, which cannot be copied", e.path, e.kind)
}

// within prefixes the path of an uncopyable error with seg.
func within(err error, seg string) error {
	if u, ok := err.(*uncopyable); ok {
		u.path = seg + u.path
	}
	return err
}

// copy copies src into dst, which has src's type and can be set; src is
// addressable or was not reached through an unexported field.
func (c *copier) copy(dst, src reflect.Value) error {
	switch src.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.String:
		dst.Set(readable(src))
	case reflect.Struct:
		src = addressable(src)
		for i := 0; i < src.NumField(); i++ {
			if err := c.copy(open(dst.Field(i)), open(src.Field(i))); err != nil {
				return within(err, "."+src.Type().Field(i).Name)
			}
		}
	case reflect.Array:
		src = addressable(src)
		for i := 0; i < src.Len(); i++ {
			if err := c.copy(dst.Index(i), open(src.Index(i))); err != nil {
				return within(err, fmt.Sprintf("[%d]", i))
			}
		}
	case reflect.Slice:
		if src.IsNil() {
			return nil
		}
		s := reflect.MakeSlice(src.Type(), src.Len(), src.Cap())
		for i := 0; i < src.Len(); i++ {
			if err := c.copy(s.Index(i), open(src.Index(i))); err != nil {
				return within(err, fmt.Sprintf("[%d]", i))
			}
		}
		dst.Set(s)
	case reflect.Map:
		if src.IsNil() {
			return nil
		}
		m := reflect.MakeMapWithSize(src.Type(), src.Len())
		it := src.MapRange()
		for it.Next() {
			k, v := it.Key(), it.Value()
			nv := reflect.New(v.Type()).Elem()
			if err := c.copy(nv, v); err != nil {
				return within(err, fmt.Sprintf("[%v]", k))
			}
			m.SetMapIndex(k, nv)
		}
		dst.Set(m)
	case reflect.Pointer:
		if src.IsNil() {
			return nil
		}
		key := ptrKey{src.Pointer(), src.Type()}
		if p, ok := c.seen[key]; ok {
			dst.Set(p)
			return nil
		}
		p := reflect.New(src.Type().Elem())
		c.seen[key] = p
		dst.Set(p)
		return c.copy(p.Elem(), open(src.Elem()))
	case reflect.Interface:
		if src.IsNil() {
			return nil
		}
		e := src.Elem()
		ne := reflect.New(e.Type()).Elem()
		if err := c.copy(ne, e); err != nil {
			return err
		}
		dst.Set(ne)
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		if src.IsNil() {
			return nil
		}
		return &uncopyable{kind: src.Kind()}
	default:
		return &uncopyable{kind: src.Kind()}
	}
	return nil
}

// readable returns v without the restriction of having been reached
// through an unexported field.
func readable(v reflect.Value) reflect.Value {
	if v.CanInterface() {
		return v
	}
	return open(addressable(v))
}

// addressable returns v, or an addressable copy of it.
func addressable(v reflect.Value) reflect.Value {
	if v.CanAddr() {
		return v
	}
	c := reflect.New(v.Type()).Elem()
	c.Set(v)
	return c
}
