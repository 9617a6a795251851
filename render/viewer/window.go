package viewer

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/dmxlab/dmx/render/spacetime"
	"github.com/dmxlab/dmx/trace"
)

// DefaultMaxEvents is the most events a window holds; the page asks for
// fewer, and draws wider windows from per-process counts instead.
const DefaultMaxEvents = 40000

// wEvent is one event of a window. Other is the other end of its message
// (the receive of a send, the send of a receive or drop), wherever it is,
// so that an arrow can be drawn to a point outside the window.
type wEvent struct {
	ID      int64   `json:"i"`
	Proc    int     `json:"p"`
	Seq     int64   `json:"s"`
	Kind    string  `json:"k"`
	Lamport int64   `json:"l"`
	Wall    int64   `json:"w"`
	Peer    int     `json:"pe"`
	Type    string  `json:"t,omitempty"`
	Res     string  `json:"r,omitempty"`
	Mark    string  `json:"m,omitempty"`
	What    string  `json:"d,omitempty"`
	Fate    string  `json:"f,omitempty"`
	Other   *wOther `json:"o,omitempty"`
}

// wOther is the other end of a message.
type wOther struct {
	Proc int `json:"p"`
	point
}

// window is what /api/window answers.
type window struct {
	Axis     string     `json:"axis"`
	Lo       int64      `json:"lo"`
	Hi       int64      `json:"hi"`
	Events   []wEvent   `json:"events"`
	More     bool       `json:"more"` // the window holds more than max events; Events has the first max
	Sections []*section `json:"sections"`
	Downs    []down     `json:"downs"`
	Indexed  bool       `json:"indexed"`
}

func (s *Server) handleWindow(v *runView, r *http.Request) (any, error) {
	wp, err := v.windowParams(r)
	if err != nil {
		return nil, err
	}
	limit, err := intParam(r, "max", DefaultMaxEvents)
	if err != nil {
		return nil, err
	}
	if limit < 1 || limit > DefaultMaxEvents {
		return nil, badRequest("max=%d: want 1..%d", limit, DefaultMaxEvents)
	}
	return v.window(wp.axis, wp.o, wp.lo, wp.hi, int(limit), wp.procs)
}

// maxBound bounds the lo and hi of a request.
const maxBound = 1 << 53

// windowQuery is what a window or density request asks for: axis=,
// lo= and hi= on it, procs=.
type windowQuery struct {
	axis   axis
	o      *outline
	lo, hi int64
	procs  []int
}

func (v *runView) windowParams(r *http.Request) (windowQuery, error) {
	var wp windowQuery
	var err error
	if wp.axis, err = axisParam(r); err != nil {
		return wp, err
	}
	if err = v.axisOK(wp.axis); err != nil {
		return wp, err
	}
	if wp.o, err = v.outline(); err != nil {
		return wp, err
	}
	if wp.lo, err = intParam(r, "lo", 0); err != nil {
		return wp, err
	}
	if wp.hi, err = intParam(r, "hi", 0); err != nil {
		return wp, err
	}
	if wp.hi < wp.lo {
		return wp, badRequest("lo=%d is after hi=%d", wp.lo, wp.hi)
	}
	// Times past 2^53 are no time of a run (and the page's numbers stop
	// being exact there); refusing them keeps the arithmetic on bounds
	// from overflowing.
	if wp.lo < -maxBound || wp.hi > maxBound {
		return wp, badRequest("lo=%d hi=%d: want times within ±2^53", wp.lo, wp.hi)
	}
	wp.procs, err = procsParam(r, len(wp.o.Lanes))
	return wp, err
}

// window reads the events of [lo, hi] on axis a (of procs; nil: all), at
// most limit of them, with their messages' other ends, and the sections
// and down times that overlap the window.
func (v *runView) window(a axis, o *outline, lo, hi int64, limit int, procs []int) (*window, error) {
	idx, indexed := v.indexed(a)
	base := int64(0)
	if a == wallAxis {
		base = o.Origin
	}
	w := &window{Axis: a.String(), Lo: lo, Hi: hi, Indexed: indexed, Events: []wEvent{}}
	// The details of sends and receives are not read: the page says what
	// they are from their columns.
	q := fmt.Sprintf(`SELECT e.id, e.proc, e.seq, e.kind, e.lamport, e.wall_ns, e.msg, e.msg_type, e.peer, e.resource,
		CASE WHEN e.kind IN ('send', 'receive') THEN NULL ELSE e.detail END,
		m.fate, o.id, o.proc, o.seq, o.lamport, o.wall_ns
		FROM events e %[2]s
		LEFT JOIN messages m ON e.msg IS NOT NULL AND m.run = e.run AND m.id = e.msg
		LEFT JOIN events o ON o.id = CASE e.kind WHEN 'send' THEN m.recv_event WHEN 'receive' THEN m.send_event WHEN 'drop' THEN m.send_event END
		WHERE e.%[1]s BETWEEN ?2 AND ?3 AND e.run = ?1%[3]s
		LIMIT ?4`, a.column(), idx, eprocFilter(procs))
	// Through the driver itself, as trace.EventReader reads: at 20,000
	// rows database/sql's conversions would cost a third of the window.
	err := v.rawQuery(q, []driver.NamedValue{{Ordinal: 1, Value: v.run.ID}, {Ordinal: 2, Value: base + lo},
		{Ordinal: 3, Value: base + hi}, {Ordinal: 4, Value: int64(limit + 1)}}, func(row []driver.Value) error {
		if len(w.Events) == limit {
			w.More = true
			return errStop
		}
		ev := trace.Event{ID: asInt(row[0]), Proc: int(asInt(row[1])), Seq: asInt(row[2]), Kind: trace.Kind(trace.ShortName(asText(row[3]))),
			Lamport: uint64(asInt(row[4])), Wall: asInt(row[5]), Msg: asInt(row[6]), MsgType: trace.ShortName(asText(row[7])), Peer: trace.NoPeer,
			Resource: trace.ShortName(asText(row[9]))}
		if row[8] != nil {
			ev.Peer = int(asInt(row[8]))
		}
		if d := asText(row[10]); d != "" {
			ev.Detail = []byte(d)
		}
		we := wEvent{ID: ev.ID, Proc: ev.Proc, Seq: ev.Seq, Kind: string(ev.Kind), Lamport: int64(ev.Lamport), Wall: ev.Wall - o.Origin,
			Peer: ev.Peer, Type: ev.MsgType, Res: ev.Resource}
		switch ev.Kind {
		case trace.KindSend, trace.KindReceive, trace.KindCSRequest, trace.KindCSEnter, trace.KindCSExit:
			// the page says these in its own words
		default:
			we.Mark, we.What = spacetime.Describe(&ev)
		}
		if row[11] != nil && (ev.Kind == trace.KindSend || ev.Kind == trace.KindDrop) {
			we.Fate = asText(row[11])
		}
		if row[12] != nil {
			we.Other = &wOther{Proc: int(asInt(row[13])), point: point{ID: asInt(row[12]), Seq: asInt(row[14]), Lamport: asInt(row[15]), Wall: asInt(row[16]) - o.Origin}}
		}
		w.Events = append(w.Events, we)
		return nil
	})
	if err != nil {
		return nil, v.fail("read a window", err)
	}
	w.Sections, _ = o.sectionsIn(a, lo, hi, procs, 4*limit)
	if w.Sections == nil {
		w.Sections = []*section{}
	}
	w.Downs = []down{}
	for _, d := range o.Downs {
		if !shown(procs, d.Proc) || d.Crash.key(a) > hi || (d.Until != nil && d.Until.key(a) < lo) {
			continue
		}
		w.Downs = append(w.Downs, d)
	}
	return w, nil
}

// eprocFilter is procFilter on the events aliased e.
func eprocFilter(procs []int) string {
	f := procFilter(procs)
	if f == "" {
		return ""
	}
	return " AND e." + f[len(" AND "):]
}

func shown(procs []int, p int) bool {
	if procs == nil {
		return true
	}
	for _, q := range procs {
		if q == p {
			return true
		}
	}
	return false
}

// errStop ends a rawQuery early, without an error.
var errStop = errors.New("stop")

// rawQuery runs q on a connection of the store through the driver's own
// interface and calls row for each row (the slice is reused).
func (v *runView) rawQuery(q string, args []driver.NamedValue, row func([]driver.Value) error) error {
	ctx := context.Background()
	conn, err := v.st.DB().Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		qc, ok := dc.(driver.QueryerContext)
		if !ok {
			return fmt.Errorf("sql driver %T cannot query directly", dc)
		}
		rows, err := qc.QueryContext(ctx, q, args)
		if err != nil {
			return err
		}
		defer rows.Close()
		dest := make([]driver.Value, len(rows.Columns()))
		for {
			if err := rows.Next(dest); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
			if err := row(dest); err == errStop {
				return nil
			} else if err != nil {
				return err
			}
		}
	})
}

func asInt(v driver.Value) int64 {
	n, _ := v.(int64)
	return n
}

func asText(v driver.Value) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}

// MarshalJSON writes the window, its events by hand: at 20,000 events
// encoding/json's reflection would be a fifth of the window's time.
func (w *window) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 256+len(w.Events)*170)
	b = append(b, `{"axis":`...)
	b = strconv.AppendQuote(b, w.Axis)
	b = append(b, `,"lo":`...)
	b = strconv.AppendInt(b, w.Lo, 10)
	b = append(b, `,"hi":`...)
	b = strconv.AppendInt(b, w.Hi, 10)
	b = append(b, `,"more":`...)
	b = strconv.AppendBool(b, w.More)
	b = append(b, `,"indexed":`...)
	b = strconv.AppendBool(b, w.Indexed)
	b = append(b, `,"events":[`...)
	for i := range w.Events {
		if i > 0 {
			b = append(b, ',')
		}
		b = w.Events[i].appendJSON(b)
	}
	b = append(b, `],"sections":`...)
	secs, err := json.Marshal(w.Sections)
	if err != nil {
		return nil, err
	}
	b = append(b, secs...)
	b = append(b, `,"downs":`...)
	downs, err := json.Marshal(w.Downs)
	if err != nil {
		return nil, err
	}
	b = append(b, downs...)
	return append(b, '}'), nil
}

// appendJSON appends the event as its struct tags say encoding/json
// would write it.
func (e *wEvent) appendJSON(b []byte) []byte {
	num := func(b []byte, k string, n int64) []byte {
		b = append(b, k...)
		return strconv.AppendInt(b, n, 10)
	}
	str := func(b []byte, k, s string) []byte {
		if s == "" {
			return b
		}
		b = append(b, k...)
		return appendJSONString(b, s)
	}
	b = num(b, `{"i":`, e.ID)
	b = num(b, `,"p":`, int64(e.Proc))
	b = num(b, `,"s":`, e.Seq)
	b = append(b, `,"k":`...)
	b = appendJSONString(b, e.Kind)
	b = num(b, `,"l":`, e.Lamport)
	b = num(b, `,"w":`, e.Wall)
	b = num(b, `,"pe":`, int64(e.Peer))
	b = str(b, `,"t":`, e.Type)
	b = str(b, `,"r":`, e.Res)
	b = str(b, `,"m":`, e.Mark)
	b = str(b, `,"d":`, e.What)
	b = str(b, `,"f":`, e.Fate)
	if o := e.Other; o != nil {
		b = num(b, `,"o":{"p":`, int64(o.Proc))
		b = num(b, `,"i":`, o.ID)
		b = num(b, `,"s":`, o.Seq)
		b = num(b, `,"l":`, o.Lamport)
		b = num(b, `,"w":`, o.Wall)
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendJSONString appends s as a JSON string (encoding/json's escaping
// of the few characters that need it; the page reads it with JSON.parse).
func appendJSONString(b []byte, s string) []byte {
	simple := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			simple = false
			break
		}
	}
	if simple {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	q, _ := json.Marshal(s)
	return append(b, q...)
}
