package viewer

import (
	"database/sql"
	"fmt"
	"net/http"

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
	a, err := axisParam(r)
	if err != nil {
		return nil, err
	}
	o, err := v.outline()
	if err != nil {
		return nil, err
	}
	lo, err := intParam(r, "lo", 0)
	if err != nil {
		return nil, err
	}
	hi, err := intParam(r, "hi", 0)
	if err != nil {
		return nil, err
	}
	if hi < lo {
		return nil, badRequest("lo=%d is after hi=%d", lo, hi)
	}
	limit, err := intParam(r, "max", DefaultMaxEvents)
	if err != nil {
		return nil, err
	}
	if limit < 1 || limit > DefaultMaxEvents {
		return nil, badRequest("max=%d: want 1..%d", limit, DefaultMaxEvents)
	}
	procs, err := procsParam(r, len(o.Lanes))
	if err != nil {
		return nil, err
	}
	return v.window(a, o, lo, hi, int(limit), procs)
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
	q := fmt.Sprintf(`SELECT e.id, e.proc, e.seq, e.kind, e.lamport, e.wall_ns, e.msg, e.msg_type, e.peer, e.resource, e.detail,
		m.fate, o.id, o.proc, o.seq, o.lamport, o.wall_ns
		FROM events e %[2]s
		LEFT JOIN messages m ON e.msg IS NOT NULL AND m.run = e.run AND m.id = e.msg
		LEFT JOIN events o ON o.id = CASE e.kind WHEN 'send' THEN m.recv_event WHEN 'receive' THEN m.send_event WHEN 'drop' THEN m.send_event END
		WHERE e.%[1]s BETWEEN ?2 AND ?3 AND e.run = ?1%[3]s
		LIMIT ?4`, a.column(), idx, eprocFilter(procs))
	rows, err := v.st.DB().Query(q, v.run.ID, base+lo, base+hi, limit+1)
	if err != nil {
		return nil, v.fail("read a window", err)
	}
	defer rows.Close()
	var (
		ev                  trace.Event
		msg, peer           sql.NullInt64
		msgType, res, fate  sql.NullString
		detail              []byte
		oid, op, os, ol, ow sql.NullInt64
		kind                string
		lamport             int64
	)
	for rows.Next() {
		if len(w.Events) == limit {
			w.More = true
			break
		}
		if err := rows.Scan(&ev.ID, &ev.Proc, &ev.Seq, &kind, &lamport, &ev.Wall, &msg, &msgType, &peer, &res, &detail,
			&fate, &oid, &op, &os, &ol, &ow); err != nil {
			return nil, v.fail("read a window", err)
		}
		ev.Kind, ev.Lamport, ev.Msg, ev.MsgType, ev.Resource, ev.Detail = trace.Kind(kind), uint64(lamport), msg.Int64, msgType.String, res.String, detail
		ev.Peer = trace.NoPeer
		if peer.Valid {
			ev.Peer = int(peer.Int64)
		}
		we := wEvent{ID: ev.ID, Proc: ev.Proc, Seq: ev.Seq, Kind: kind, Lamport: lamport, Wall: ev.Wall - o.Origin,
			Peer: ev.Peer, Type: ev.MsgType, Res: ev.Resource}
		switch ev.Kind {
		case trace.KindSend, trace.KindReceive, trace.KindCSRequest, trace.KindCSEnter, trace.KindCSExit:
			// the page says these in its own words
		default:
			we.Mark, we.What = spacetime.Describe(&ev)
		}
		if fate.Valid && (ev.Kind == trace.KindSend || ev.Kind == trace.KindDrop) {
			we.Fate = fate.String
		}
		if oid.Valid {
			we.Other = &wOther{Proc: int(op.Int64), point: point{ID: oid.Int64, Seq: os.Int64, Lamport: ol.Int64, Wall: ow.Int64 - o.Origin}}
		}
		w.Events = append(w.Events, we)
	}
	if err := rows.Err(); err != nil {
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
