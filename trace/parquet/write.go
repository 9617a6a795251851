package parquet

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"reflect"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// This file is a Parquet writer of just what Export writes: flat rows of
// int64, bool and string columns, optional (a pointer: NULL when nil)
// or not, and lists of strings, every page zstd-compressed. It follows
// the format's specification (github.com/apache/parquet-format,
// parquet.thrift): data pages of version 1, PLAIN values, levels in the
// RLE/bit-packing hybrid, the footer in Thrift's compact protocol.
//
// It replaces github.com/parquet-go/parquet-go in dmx's binary, which
// linked google.golang.org/protobuf: protobuf's package initialisation
// reaches reflect.Value.MethodByName with names the linker cannot bound,
// and from then on the linker keeps every exported method of every type
// (gonum's LAPACK among them): about 18 MB of the dmx binary and 7 MB of
// the resident set of every dmx process, `dmx --version` included (see
// docs/performance.md). parquet-go remains the tests' reader.

// rowGroupRows is how many rows a row group holds at most: what a writer
// buffers before it writes them.
const rowGroupRows = 1 << 16

// physical types and the other enumerations of parquet.thrift this
// writer uses.
const (
	typeBoolean   = 0
	typeInt64     = 2
	typeByteArray = 6

	repRequired = 0
	repOptional = 1
	repRepeated = 2

	convertedUTF8 = 0
	convertedList = 3

	encPlain = 0
	encRLE   = 3

	codecZstd = 6

	pageData = 0
)

// column is one leaf column: its schema and the values of the row group
// being buffered.
type column struct {
	name     string // the field's name ("fault_kinds" for a list)
	typ      int    // typeBoolean, typeInt64 or typeByteArray
	optional bool   // a pointer field: definition level 0 is NULL
	list     bool   // a []string: fault_kinds.list.element
	field    int    // index of the struct field

	defs, reps []byte // levels, one per value slot (empty when the level is always 0)
	values     []byte // PLAIN-encoded values (booleans packed at page time)
	bools      []bool
	slots      int // value slots (level entries) in the row group

	// what the file's footer says of each of this column's chunks
	chunks []chunkMeta
}

type chunkMeta struct {
	offset, values, uncompressed, compressed int64
}

// writer writes rows of T into one Parquet file.
type writer[T any] struct {
	f      *os.File
	w      *bufio.Writer
	off    int64
	cols   []*column
	groups []groupMeta
	rows   int // rows buffered in the row group being made
	total  int64
	enc    *zstd.Encoder
}

type groupMeta struct {
	rows, bytes int64
}

// newWriter creates path and writes Parquet's magic into it; the schema
// is T's exported fields with a parquet tag: "name", and "name,list"
// for a []string; a pointer field is an optional column.
func newWriter[T any](path string, enc *zstd.Encoder) (*writer[T], error) {
	cols, err := schemaOf(reflect.TypeFor[T]())
	if err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w := &writer[T]{f: f, w: bufio.NewWriterSize(f, 1<<16), cols: cols, enc: enc}
	w.write([]byte("PAR1"))
	return w, nil
}

// schemaOf returns the columns of struct type t.
func schemaOf(t reflect.Type) ([]*column, error) {
	var cols []*column
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, ok := sf.Tag.Lookup("parquet")
		if !ok {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		c := &column{name: name, field: i}
		ft := sf.Type
		if ft.Kind() == reflect.Pointer {
			c.optional, ft = true, ft.Elem()
		}
		if ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.String && strings.Contains(opts, "list") {
			c.list, ft = true, ft.Elem()
		}
		switch ft.Kind() {
		case reflect.Int64:
			c.typ = typeInt64
		case reflect.String:
			c.typ = typeByteArray
		case reflect.Bool:
			c.typ = typeBoolean
		default:
			return nil, fmt.Errorf("parquet: field %s of %s: type %s is not one this writer writes", sf.Name, t, sf.Type)
		}
		if c.optional && c.list {
			return nil, fmt.Errorf("parquet: field %s of %s: an optional list is not one this writer writes", sf.Name, t)
		}
		cols = append(cols, c)
	}
	return cols, nil
}

// Write buffers rows, writing a row group each time one is full.
func (w *writer[T]) Write(rows []T) error {
	for i := range rows {
		v := reflect.ValueOf(&rows[i]).Elem()
		for _, c := range w.cols {
			c.add(v.Field(c.field))
		}
		if w.rows++; w.rows == rowGroupRows {
			if err := w.flushGroup(); err != nil {
				return err
			}
		}
	}
	return nil
}

// add appends the field f of a row to c.
func (c *column) add(f reflect.Value) {
	switch {
	case c.list:
		n := f.Len()
		if n == 0 {
			// An empty list: one slot with no value, defined only
			// as far as the list itself.
			c.reps, c.defs, c.slots = append(c.reps, 0), append(c.defs, 0), c.slots+1
			return
		}
		for j := range n {
			c.reps, c.defs, c.slots = append(c.reps, min(byte(j), 1)), append(c.defs, 1), c.slots+1
			c.value(f.Index(j))
		}
	case c.optional:
		c.slots++
		if f.IsNil() {
			c.defs = append(c.defs, 0)
			return
		}
		c.defs = append(c.defs, 1)
		c.value(f.Elem())
	default:
		c.slots++
		c.value(f)
	}
}

// value appends one value in PLAIN encoding.
func (c *column) value(v reflect.Value) {
	switch c.typ {
	case typeInt64:
		c.values = binary.LittleEndian.AppendUint64(c.values, uint64(v.Int()))
	case typeByteArray:
		s := v.String()
		c.values = binary.LittleEndian.AppendUint32(c.values, uint32(len(s)))
		c.values = append(c.values, s...)
	case typeBoolean:
		c.bools = append(c.bools, v.Bool())
	}
}

func (w *writer[T]) write(b []byte) {
	n, _ := w.w.Write(b) // the error is bufio's to keep and Flush's to return
	w.off += int64(n)
}

// flushGroup writes the buffered rows as a row group: each column one
// chunk of one data page.
func (w *writer[T]) flushGroup() error {
	if w.rows == 0 {
		return nil
	}
	var bytes int64
	for _, c := range w.cols {
		page := c.page()
		comp := w.enc.EncodeAll(page, nil)
		if len(page) > math.MaxInt32 || len(comp) > math.MaxInt32 {
			return fmt.Errorf("parquet: column %s: a page of %d bytes is more than Parquet's pages hold", c.name, len(page))
		}
		var h compact
		h.begin()
		h.i32(1, pageData)
		h.i32(2, int32(len(page)))
		h.i32(3, int32(len(comp)))
		h.structField(5) // data_page_header
		h.i32(1, int32(c.slots))
		h.i32(2, encPlain)
		h.i32(3, encRLE)
		h.i32(4, encRLE)
		h.end()
		h.end()
		off := w.off
		w.write(h.b)
		w.write(comp)
		c.chunks = append(c.chunks, chunkMeta{offset: off, values: int64(c.slots),
			uncompressed: int64(len(h.b) + len(page)), compressed: int64(len(h.b) + len(comp))})
		bytes += int64(len(h.b) + len(page))
		c.defs, c.reps, c.values, c.bools, c.slots = c.defs[:0], c.reps[:0], c.values[:0], c.bools[:0], 0
	}
	w.groups = append(w.groups, groupMeta{rows: int64(w.rows), bytes: bytes})
	w.total += int64(w.rows)
	w.rows = 0
	return nil
}

// page is the body of c's data page: repetition levels, definition
// levels (each with its length, where the column has them), the values.
func (c *column) page() []byte {
	var b []byte
	if c.list {
		b = levels(b, c.reps)
	}
	if c.list || c.optional {
		b = levels(b, c.defs)
	}
	if c.typ == typeBoolean {
		packed := make([]byte, (len(c.bools)+7)/8)
		for i, v := range c.bools {
			if v {
				packed[i/8] |= 1 << (i % 8)
			}
		}
		return append(b, packed...)
	}
	return append(b, c.values...)
}

// levels appends levels of bit width 1 in the RLE/bit-packing hybrid, as
// RLE runs only (a run: its length times two, as a varint, then its
// value in one byte), prefixed by their length in four bytes.
func levels(b, ls []byte) []byte {
	at := len(b)
	b = append(b, 0, 0, 0, 0)
	for i := 0; i < len(ls); {
		j := i + 1
		for j < len(ls) && ls[j] == ls[i] {
			j++
		}
		b = binary.AppendUvarint(b, uint64(j-i)<<1)
		b = append(b, ls[i])
		i = j
	}
	binary.LittleEndian.PutUint32(b[at:], uint32(len(b)-at-4))
	return b
}

// Close writes the last row group and the footer, and closes the file.
func (w *writer[T]) Close() error {
	err := w.flushGroup()
	if err == nil {
		footer := w.footer()
		w.write(footer)
		w.write(binary.LittleEndian.AppendUint32(nil, uint32(len(footer))))
		w.write([]byte("PAR1"))
		err = w.w.Flush()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// footer is the file's FileMetaData.
func (w *writer[T]) footer() []byte {
	var m compact
	m.begin()
	m.i32(1, 1) // version
	// schema: the root, then each column (a list as its three levels)
	elems := 1
	for _, c := range w.cols {
		elems++
		if c.list {
			elems += 2
		}
	}
	m.listField(2, thriftStruct, elems)
	m.begin()
	m.str(4, "schema")
	m.i32(5, int32(len(w.cols)))
	m.end()
	for _, c := range w.cols {
		if c.list {
			// required group NAME (LIST) { repeated group list {
			// required binary element (STRING); } }
			m.begin()
			m.i32(3, repRequired)
			m.str(4, c.name)
			m.i32(5, 1)
			m.i32(6, convertedList)
			m.structField(10)
			m.structField(3) // LogicalType.LIST
			m.end()
			m.end()
			m.end()
			m.begin()
			m.i32(3, repRepeated)
			m.str(4, "list")
			m.i32(5, 1)
			m.end()
		}
		m.begin()
		m.i32(1, int32(c.typ))
		rep := repRequired
		if c.optional {
			rep = repOptional
		}
		m.i32(3, int32(rep))
		if c.list {
			m.str(4, "element")
		} else {
			m.str(4, c.name)
		}
		if c.typ == typeByteArray {
			m.i32(6, convertedUTF8)
			m.structField(10)
			m.structField(1) // LogicalType.STRING
			m.end()
			m.end()
		}
		m.end()
	}
	m.i64(3, w.total)
	m.listField(4, thriftStruct, len(w.groups))
	for g, group := range w.groups {
		m.begin()
		m.listField(1, thriftStruct, len(w.cols))
		for _, c := range w.cols {
			ch := c.chunks[g]
			m.begin()
			m.i64(2, ch.offset)
			m.structField(3)
			m.i32(1, int32(c.typ))
			m.listField(2, thriftI32, 2)
			m.b = binary.AppendVarint(m.b, encPlain)
			m.b = binary.AppendVarint(m.b, encRLE)
			path := []string{c.name}
			if c.list {
				path = append(path, "list", "element")
			}
			m.listField(3, thriftBinary, len(path))
			for _, p := range path {
				m.b = binary.AppendUvarint(m.b, uint64(len(p)))
				m.b = append(m.b, p...)
			}
			m.i32(4, codecZstd)
			m.i64(5, ch.values)
			m.i64(6, ch.uncompressed)
			m.i64(7, ch.compressed)
			m.i64(9, ch.offset)
			m.end()
			m.end()
		}
		m.i64(2, group.bytes)
		m.i64(3, group.rows)
		m.end()
	}
	m.str(6, "dmx")
	m.end()
	return m.b
}

// Thrift's compact protocol, as much of it as the footer and the page
// headers need: structs, i32, i64, binary and lists.
const (
	thriftI32    = 5
	thriftI64    = 6
	thriftBinary = 8
	thriftList   = 9
	thriftStruct = 12
)

// compact encodes Thrift structs. A field's header holds the difference
// from the previous field's id, so each struct keeps its last id.
type compact struct {
	b    []byte
	last []int16 // the last field id of each open struct
}

// begin opens a struct (a list's element, or the top one).
func (c *compact) begin() { c.last = append(c.last, 0) }

// end closes the innermost struct with a stop byte.
func (c *compact) end() {
	c.b = append(c.b, 0)
	c.last = c.last[:len(c.last)-1]
}

func (c *compact) field(id int16, typ byte) {
	last := &c.last[len(c.last)-1]
	if d := id - *last; d > 0 && d <= 15 {
		c.b = append(c.b, byte(d)<<4|typ)
	} else {
		c.b = append(c.b, typ)
		c.b = binary.AppendVarint(c.b, int64(id))
	}
	*last = id
}

func (c *compact) i32(id int16, v int32) {
	c.field(id, thriftI32)
	c.b = binary.AppendVarint(c.b, int64(v))
}

func (c *compact) i64(id int16, v int64) {
	c.field(id, thriftI64)
	c.b = binary.AppendVarint(c.b, v)
}

func (c *compact) str(id int16, s string) {
	c.field(id, thriftBinary)
	c.b = binary.AppendUvarint(c.b, uint64(len(s)))
	c.b = append(c.b, s...)
}

// structField opens a struct-valued field; end closes it.
func (c *compact) structField(id int16) {
	c.field(id, thriftStruct)
	c.begin()
}

// listField starts a list-valued field of n elements of type elem; the
// elements follow (a struct element with begin and end).
func (c *compact) listField(id int16, elem byte, n int) {
	c.field(id, thriftList)
	if n < 15 {
		c.b = append(c.b, byte(n)<<4|elem)
	} else {
		c.b = append(c.b, 0xf0|elem)
		c.b = binary.AppendUvarint(c.b, uint64(n))
	}
}

// writeFile writes rows into path as one Parquet file.
func writeFile[T any](path string, rows []T, enc *zstd.Encoder) error {
	w, err := newWriter[T](path, enc)
	if err != nil {
		return err
	}
	if err := w.Write(rows); err != nil {
		w.f.Close()
		return err
	}
	return w.Close()
}
