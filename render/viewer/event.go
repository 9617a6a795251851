package viewer

import (
	"database/sql"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/dmxlab/dmx/render/spacetime"
	"github.com/dmxlab/dmx/trace"
)

// eventInfo is what /api/event says of one event: all its columns, its
// message, and its causal past and future as frontiers. Past[q] is the
// last event of process q that happened before it (or is it): q's events
// with seq <= Past[q] are its past. Future[q] is the first event of q that
// it happened before (0: none): q's events with seq >= Future[q] are its
// future. Both come from vector clocks, so they hold for the whole run,
// whatever window the page shows.
type eventInfo struct {
	ID       int64           `json:"id"`
	Ref      string          `json:"ref"`
	Proc     int             `json:"proc"`
	Seq      int64           `json:"seq"`
	Kind     string          `json:"kind"`
	What     string          `json:"what"`
	Lamport  int64           `json:"lamport"`
	VC       trace.VC        `json:"vc"`
	Wall     int64           `json:"wall"`   // since the run's first event
	WallNs   int64           `json:"wallNs"` // as recorded
	Peer     *int64          `json:"peer"`
	Resource *string         `json:"resource"`
	Msg      *msgInfo        `json:"msg,omitempty"`
	Detail   json.RawMessage `json:"detail,omitempty"`
	Past     []int64         `json:"past,omitempty"`
	Future   []int64         `json:"future,omitempty"`
	Causal   string          `json:"causal,omitempty"` // why Past and Future are missing
}

// msgInfo is the message of a send, receive or drop.
type msgInfo struct {
	ID int64 `json:"id"`
	// Name is the message as the page says it, "P1's message 1"
	// (trace.MsgName): its id, 4294967297, tells a reader nothing.
	Name     string  `json:"name"`
	Type     string  `json:"type"`
	Sender   int64   `json:"sender"`
	Receiver int64   `json:"receiver"`
	Fate     string  `json:"fate"`
	Send     *string `json:"send"` // the send event's name, "P0#3"
	Recv     *string `json:"recv"`
}

func refParam(r *http.Request) (trace.Ref, error) {
	s := r.URL.Query().Get("ref")
	ref, err := spacetime.ParseRef(s)
	if err != nil {
		return ref, badRequest("ref=%q: want an event named as P3#120", s)
	}
	return ref, nil
}

func (s *Server) handleEvent(v *runView, r *http.Request) (any, error) {
	o, err := v.outline()
	if err != nil {
		return nil, err
	}
	ref, err := refParam(r)
	if err != nil {
		return nil, err
	}
	return v.event(o, ref)
}

// errNoEvent says the run has no such event.
func (v *runView) noEvent(ref trace.Ref) error {
	return &apiError{http.StatusNotFound, "no event " + ref.String() + " in this run"}
}

func (v *runView) event(o *outline, ref trace.Ref) (*eventInfo, error) {
	db := v.st.DB()
	var (
		e                    eventInfo
		vc                   sql.NullString
		msg, peer            sql.NullInt64
		msgType, res, detail sql.NullString
	)
	err := db.QueryRow(`SELECT id, kind, lamport, vc, wall_ns, msg, msg_type, peer, resource, detail FROM events
		WHERE run = ? AND proc = ? AND seq = ?`, v.run.ID, ref.Proc, ref.Seq).
		Scan(&e.ID, &e.Kind, &e.Lamport, &vc, &e.WallNs, &msg, &msgType, &peer, &res, &detail)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, v.noEvent(ref)
	}
	if err != nil {
		return nil, v.fail("read "+ref.String(), err)
	}
	e.Ref, e.Proc, e.Seq, e.Wall = ref.String(), ref.Proc, ref.Seq, e.WallNs-o.Origin
	if peer.Valid {
		e.Peer = &peer.Int64
	}
	// Names as every reader gives them (trace.ShortName): a 5 MB
	// resource name is not sent whole to the page.
	msgType.String, res.String = trace.ShortName(msgType.String), trace.ShortName(res.String)
	e.Kind = trace.ShortName(e.Kind)
	if res.Valid {
		e.Resource = &res.String
	}
	if detail.Valid && json.Valid([]byte(detail.String)) {
		e.Detail = json.RawMessage(detail.String)
	}
	tev := trace.Event{Proc: ref.Proc, Seq: ref.Seq, Kind: trace.Kind(e.Kind), Lamport: uint64(e.Lamport), Peer: trace.NoPeer,
		MsgType: msgType.String, Resource: res.String, Detail: e.Detail}
	if peer.Valid {
		tev.Peer = int(peer.Int64)
	}
	_, e.What = spacetime.Describe(&tev)
	if msg.Valid {
		m := &msgInfo{ID: msg.Int64}
		var typ sql.NullString
		var send, recv, sender, receiver sql.NullInt64
		err := db.QueryRow(`SELECT type, sender, receiver, send_event, recv_event, fate FROM messages WHERE run = ? AND id = ?`, v.run.ID, msg.Int64).
			Scan(&typ, &sender, &receiver, &send, &recv, &m.Fate)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, v.fail("read message "+strconv.FormatInt(msg.Int64, 10), err)
		}
		m.Type, m.Sender, m.Receiver = typ.String, sender.Int64, receiver.Int64
		m.Name = trace.MsgName(msg.Int64, -1)
		if sender.Valid {
			m.Name = trace.MsgName(msg.Int64, int(sender.Int64))
		}
		m.Send, m.Recv = v.refOf(send), v.refOf(recv)
		e.Msg = m
	}
	if !vc.Valid {
		e.Causal = "this trace has no vector clocks: the causal past and future cannot be shown"
		return &e, nil
	}
	clock, err := trace.ParseVC(nil, []byte(vc.String))
	if err != nil {
		e.Causal = "this event's vector clock does not parse: " + err.Error()
		return &e, nil
	}
	e.VC = clock
	e.Past = make([]int64, len(o.Lanes))
	for q := range e.Past {
		if q < len(clock) {
			e.Past[q] = int64(clock[q])
		}
	}
	e.Past[ref.Proc] = ref.Seq
	if e.Future, err = v.future(o, ref); err != nil {
		return nil, err
	}
	return &e, nil
}

// refOf names the event of id, or nil.
func (v *runView) refOf(id sql.NullInt64) *string {
	if !id.Valid {
		return nil
	}
	var p, s int64
	if err := v.st.DB().QueryRow(`SELECT proc, seq FROM events WHERE id = ?`, id.Int64).Scan(&p, &s); err != nil {
		return nil
	}
	r := trace.Ref{Proc: int(p), Seq: s}.String()
	return &r
}

// future finds, for each process q, the first of its events whose vector
// clock knows ref (entry ref.Proc >= ref.Seq): a binary search over q's
// events, since a process's clock never goes back. Each probe is a lookup
// in the (run, proc, seq) index.
func (v *runView) future(o *outline, ref trace.Ref) ([]int64, error) {
	st, err := v.st.DB().Prepare(`SELECT vc FROM events WHERE run = ? AND proc = ? AND seq = ?`)
	if err != nil {
		return nil, v.fail("prepare a clock lookup", err)
	}
	defer st.Close()
	var buf trace.VC
	knows := func(q int, seq int64) (bool, error) {
		var vc sql.NullString
		err := st.QueryRow(v.run.ID, q, seq).Scan(&vc)
		if errors.Is(err, sql.ErrNoRows) || !vc.Valid {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		buf, err = trace.ParseVC(buf, []byte(vc.String))
		if err != nil {
			return false, nil
		}
		return ref.Proc < len(buf) && int64(buf[ref.Proc]) >= ref.Seq, nil
	}
	out := make([]int64, len(o.Lanes))
	for q, ln := range o.Lanes {
		if q == ref.Proc {
			out[q] = ref.Seq
			continue
		}
		lo, hi := int64(1), ln.Events+1 // the answer is in [lo, hi]; hi: none
		for lo < hi {
			mid := lo + (hi-lo)/2
			ok, err := knows(q, mid)
			if err != nil {
				return nil, v.fail("read a clock", err)
			}
			if ok {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		if lo <= ln.Events {
			out[q] = lo
		}
	}
	return out, nil
}

// handleState answers the algorithm state of a process after an event,
// from a replay of the run up to it.
func (s *Server) handleState(v *runView, r *http.Request) (any, error) {
	ref, err := refParam(r)
	if err != nil {
		return nil, err
	}
	if s.opts.State == nil {
		return nil, &apiError{http.StatusNotImplemented, "this dmx cannot replay runs yet, so it cannot show the algorithm's state after an event (dmx replay is not built in)"}
	}
	o, err := v.outline()
	if err != nil {
		return nil, err
	}
	if ref.Proc >= len(o.Lanes) || ref.Seq > o.Lanes[ref.Proc].Events {
		return nil, v.noEvent(ref)
	}
	st, err := s.opts.State(v.st, v.run, ref)
	if err != nil {
		return nil, &apiError{http.StatusUnprocessableEntity, err.Error()}
	}
	return st, nil
}
