package viewer

import (
	"cmp"
	"database/sql"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/dmxlab/dmx/render/spacetime"
	"github.com/dmxlab/dmx/trace"
)

// diffJob compares two runs in the background, process by process.
type diffJob struct {
	done    chan struct{}
	started time.Time
	res     *diffReply
}

// diffReply says, for each process, where its history first differs
// between run A and run B: the first event (same sequence number in both,
// since the histories agree before it) whose kind, message type, peer or
// resource differs, or where one history ends and the other goes on.
type diffReply struct {
	State   string     `json:"state"` // "running", "done", "error"
	Error   string     `json:"error,omitempty"`
	Seconds float64    `json:"seconds"`
	Procs   []procDiff `json:"procs"`
	Same    int        `json:"same"` // processes whose histories agree throughout
}

type procDiff struct {
	Proc  int       `json:"p"`
	Seq   int64     `json:"seq"`
	A     *refPoint `json:"a"` // nil: the history ends before Seq
	B     *refPoint `json:"b"`
	WhatA string    `json:"whatA"`
	WhatB string    `json:"whatB"`
}

func (s *Server) handleDiff(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a, err := s.run(q.Get("a"))
	if err == nil && q.Get("b") == "" {
		err = badRequest("want two runs: a=T:R&b=T:R")
	}
	var b *runView
	if err == nil {
		b, err = s.run(q.Get("b"))
	}
	if err == nil && a == b {
		err = badRequest("a and b are the same run")
	}
	if err != nil {
		s.reply(w, r, nil, err)
		return
	}
	wait, err := intParam(r, "wait", 0)
	if err != nil {
		s.reply(w, r, nil, err)
		return
	}
	key := a.key + "|" + b.key
	s.diffMu.Lock()
	j := s.diffs[key]
	if j == nil {
		j = &diffJob{done: make(chan struct{}), started: time.Now()}
		s.diffs[key] = j
		go func() {
			defer close(j.done)
			res, err := compare(a, b)
			if err != nil {
				res = &diffReply{State: "error", Error: err.Error(), Procs: []procDiff{}}
			}
			res.Seconds = time.Since(j.started).Seconds()
			j.res = res
		}()
	}
	s.diffMu.Unlock()
	select {
	case <-j.done:
		s.reply(w, r, j.res, nil)
	case <-time.After(time.Duration(min(max(wait, 0), 10000)) * time.Millisecond):
		s.reply(w, r, &diffReply{State: "running", Seconds: time.Since(j.started).Seconds(), Procs: []procDiff{}}, nil)
	}
}

// histEvent is what the comparison reads of an event.
type histEvent struct {
	ok        bool
	id, seq   int64
	kind      string
	msgType   sql.NullString
	peer      sql.NullInt64
	res       sql.NullString
	lamport   int64
	wall      int64
	detail    []byte
	proc      int
	originOff int64
}

func (h *histEvent) same(o *histEvent) bool {
	return h.kind == o.kind && h.msgType == o.msgType && h.peer == o.peer && h.res == o.res
}

func (h *histEvent) point() *refPoint {
	if !h.ok {
		return nil
	}
	return &refPoint{Proc: h.proc, point: point{ID: h.id, Seq: h.seq, Lamport: h.lamport, Wall: h.wall - h.originOff}}
}

func (h *histEvent) what() string {
	if !h.ok {
		return "(its history ends)"
	}
	ev := trace.Event{Proc: h.proc, Seq: h.seq, Kind: trace.Kind(h.kind), MsgType: h.msgType.String, Resource: h.res.String,
		Peer: trace.NoPeer, Detail: h.detail}
	if h.peer.Valid {
		ev.Peer = int(h.peer.Int64)
	}
	_, what := spacetime.Describe(&ev)
	return ev.Ref().String() + " " + what
}

// history reads one process's events in program order.
type history struct {
	rows *sql.Rows
	ev   histEvent
}

func (v *runView) history(p int, origin int64) (*history, error) {
	rows, err := v.st.DB().Query(`SELECT id, seq, kind, msg_type, peer, resource, lamport, wall_ns, detail FROM events
		WHERE run = ? AND proc = ? ORDER BY seq`, v.run.ID, p)
	if err != nil {
		return nil, v.fail(fmt.Sprintf("read P%d's history", p), err)
	}
	return &history{rows: rows, ev: histEvent{proc: p, originOff: origin}}, nil
}

func (h *history) next() error {
	h.ev.ok = h.rows.Next()
	if !h.ev.ok {
		h.ev.seq++
		return h.rows.Err()
	}
	e := &h.ev
	err := h.rows.Scan(&e.id, &e.seq, &e.kind, &e.msgType, &e.peer, &e.res, &e.lamport, &e.wall, &e.detail)
	e.msgType.String, e.res.String = trace.ShortName(e.msgType.String), trace.ShortName(e.res.String)
	e.kind = trace.ShortName(e.kind)
	return err
}

// compare walks each process's two histories side by side up to their
// first difference.
func compare(a, b *runView) (*diffReply, error) {
	oa, err := a.outline()
	if err != nil {
		return nil, err
	}
	ob, err := b.outline()
	if err != nil {
		return nil, err
	}
	rep := &diffReply{State: "done", Procs: []procDiff{}}
	for p := 0; p < max(len(oa.Lanes), len(ob.Lanes)); p++ {
		d, err := compareProc(a, b, oa, ob, p)
		if err != nil {
			return nil, err
		}
		if d == nil {
			rep.Same++
			continue
		}
		rep.Procs = append(rep.Procs, *d)
	}
	return rep, nil
}

func compareProc(a, b *runView, oa, ob *outline, p int) (*procDiff, error) {
	ha, err := a.history(p, oa.Origin)
	if err != nil {
		return nil, err
	}
	defer ha.rows.Close()
	hb, err := b.history(p, ob.Origin)
	if err != nil {
		return nil, err
	}
	defer hb.rows.Close()
	for {
		if err := ha.next(); err != nil {
			return nil, a.fail("read a history", err)
		}
		if err := hb.next(); err != nil {
			return nil, b.fail("read a history", err)
		}
		switch {
		case !ha.ev.ok && !hb.ev.ok:
			return nil, nil
		case ha.ev.ok && hb.ev.ok && ha.ev.same(&hb.ev):
			continue
		}
		seq := ha.ev.seq
		if !ha.ev.ok {
			seq = hb.ev.seq
		}
		return &procDiff{Proc: p, Seq: seq, A: ha.ev.point(), B: hb.ev.point(), WhatA: ha.ev.what(), WhatB: hb.ev.what()}, nil
	}
}

// sortPoints orders events by process and sequence number.
func sortPoints(ps []refPoint) {
	slices.SortFunc(ps, func(a, b refPoint) int { return cmp.Or(cmp.Compare(a.Proc, b.Proc), cmp.Compare(a.Seq, b.Seq)) })
}
