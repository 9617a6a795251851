package viewer

import (
	"cmp"
	"database/sql"
	"errors"
	"fmt"
	"github.com/dmxlab/dmx/render/palette"
	"maps"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dmxlab/dmx/trace"
)

// axis is what places events along the time axis of a window.
type axis int

const (
	lamportAxis axis = iota
	wallAxis
)

func (a axis) String() string {
	if a == wallAxis {
		return "wall"
	}
	return "lamport"
}

// column is the events column of the axis.
func (a axis) column() string {
	if a == wallAxis {
		return "wall_ns"
	}
	return "lamport"
}

// runView is one run as the server shows it: what it reads once (the
// outline, critical sections, crashes, per-process counts over time) and
// the findings, computed in the background.
type runView struct {
	key                 string
	st                  *trace.Store
	run                 trace.Run
	srv                 *Server
	hasLamport, hasWall bool

	outlineOnce sync.Once
	out         *outline
	outErr      error

	ovMu sync.Mutex
	ov   [2]*overview

	checkMu sync.Mutex
	check   *checkJob
}

// point is an event as the page places it: its id, sequence number, and
// position on each axis (wall time since the run's first event).
type point struct {
	ID      int64 `json:"i"`
	Seq     int64 `json:"s"`
	Lamport int64 `json:"l"`
	Wall    int64 `json:"w"`
}

func (p *point) key(a axis) int64 {
	if a == wallAxis {
		return p.Wall
	}
	return p.Lamport
}

// laneJSON is one process's lane.
type laneJSON struct {
	Proc   int    `json:"p"`
	Name   string `json:"name"`
	Role   string `json:"role,omitempty"`
	Events int64  `json:"events"`
}

// down is a time a process spent crashed: from its crash to its next
// event (its recovery), or to the end of the run.
type down struct {
	Proc  int    `json:"p"`
	Crash point  `json:"crash"`
	Until *point `json:"until"`
}

// section is one critical section, or a request that was never granted:
// from the request (if recorded) through the entry to the exit, or to the
// crash that ended it (Crashed), or to the end of the run (no Exit).
type section struct {
	Proc    int    `json:"p"`
	Res     string `json:"r"`
	Request *point `json:"q,omitempty"`
	Enter   *point `json:"e,omitempty"`
	Exit    *point `json:"x,omitempty"`
	Crashed bool   `json:"c,omitempty"`
	// stop ends a section without exit that another replaced (a request
	// never granted, followed by the next request): its end for searches.
	stop *point
}

func (s *section) start() *point {
	if s.Request != nil {
		return s.Request
	}
	return s.Enter
}

// endKey is where the section ends on the axis; MaxInt64 if it never did.
func (s *section) endKey(a axis) int64 {
	switch {
	case s.Exit != nil:
		return s.Exit.key(a)
	case s.stop != nil:
		return s.stop.key(a)
	}
	return math.MaxInt64
}

// colors are the colours of a run's message types and resources.
type colors struct {
	Types     map[string]string `json:"types"`
	Resources map[string]string `json:"resources"`
}

// outline is what the page needs first: the lanes, the run's extent on
// both axes, its resources, message types and down times.
type outline struct {
	Run       runJSON    `json:"run"`
	Lanes     []laneJSON `json:"lanes"`
	Lamport   [2]int64   `json:"lamport"`
	Wall      [2]int64   `json:"wall"` // since Origin
	Origin    int64      `json:"origin"`
	Events    int64      `json:"events"`
	Indexed   bool       `json:"indexed"`
	Note      string     `json:"note,omitempty"`
	wallErr   string     // why the run has no wall axis ("": it has one)
	Resources []string   `json:"resources"`
	Types     []string   `json:"types"`
	// Colors are the colours of the run's message types and resources,
	// from render/palette: those of the static pictures.
	Colors   colors `json:"colors"`
	Downs    []down `json:"downs"`
	Sections int    `json:"sections"`
	Replay   bool   `json:"replay"`

	// sections by process and resource, each list in program order
	// (disjoint, so sorted by start and by end alike).
	sections map[int]map[string][]*section
}

func (s *Server) handleOutline(v *runView, r *http.Request) (any, error) { return v.outline() }

// outline reads the run's outline once.
func (v *runView) outline() (*outline, error) {
	v.outlineOnce.Do(func() { v.out, v.outErr = v.readOutline() })
	return v.out, v.outErr
}

// maxWallSpan is the longest wall axis the viewer draws: 100 years, far
// beyond any run, far below what overflows int64 arithmetic on it.
const maxWallSpan = int64(100 * 365 * 24 * time.Hour)

// axisOK refuses the wall axis of a run whose wall times cannot make one.
func (v *runView) axisOK(a axis) error {
	if a != wallAxis {
		return nil
	}
	o, err := v.outline()
	if err != nil {
		return err
	}
	if o.wallErr != "" {
		return &apiError{http.StatusUnprocessableEntity, o.wallErr}
	}
	return nil
}

// indexed says whether windows on the axis are read through an index,
// and the INDEXED BY clause that makes SQLite use it.
func (v *runView) indexed(a axis) (string, bool) {
	switch {
	case a == lamportAxis && v.hasLamport:
		return "INDEXED BY " + trace.LamportIndex, true
	case a == wallAxis && v.hasWall:
		return "INDEXED BY " + trace.WallIndex, true
	}
	return "", false
}

func (v *runView) readOutline() (*outline, error) {
	db, run := v.st.DB(), v.run.ID
	o := &outline{Run: v.describe(), Indexed: v.hasLamport && v.hasWall, Replay: v.srv.opts.State != nil}
	if !o.Indexed {
		o.Note = fmt.Sprintf("this trace was recorded by an older dmx, without time indexes: each window is read by scanning the run, "+
			"which takes long on a big run. Re-record it, or add them (the file is then written): sqlite3 '%s' %q",
			strings.ReplaceAll(v.st.Path(), "'", `'\''`),
			"CREATE INDEX events_lamport ON events(lamport, run, proc); CREATE INDEX events_wall ON events(wall_ns, run, proc)")
	}
	// Extent: through the time indexes, the first and last entries;
	// otherwise one scan.
	var lamLo, lamHi, wallLo, wallHi sql.NullInt64
	if o.Indexed {
		for _, q := range []struct {
			dst *sql.NullInt64
			sql string
		}{
			{&lamLo, `SELECT lamport FROM events INDEXED BY events_lamport WHERE run = ? ORDER BY lamport LIMIT 1`},
			{&lamHi, `SELECT lamport FROM events INDEXED BY events_lamport WHERE run = ? ORDER BY lamport DESC LIMIT 1`},
			{&wallLo, `SELECT wall_ns FROM events INDEXED BY events_wall WHERE run = ? ORDER BY wall_ns LIMIT 1`},
			{&wallHi, `SELECT wall_ns FROM events INDEXED BY events_wall WHERE run = ? ORDER BY wall_ns DESC LIMIT 1`},
		} {
			if err := db.QueryRow(q.sql, run).Scan(q.dst); err != nil && !errors.Is(err, sql.ErrNoRows) {
				return nil, v.fail("read the run's extent", err)
			}
		}
	} else if err := db.QueryRow(`SELECT min(lamport), max(lamport), min(wall_ns), max(wall_ns) FROM events WHERE run = ?`, run).
		Scan(&lamLo, &lamHi, &wallLo, &wallHi); err != nil {
		return nil, v.fail("read the run's extent", err)
	}
	o.Lamport = [2]int64{lamLo.Int64, lamHi.Int64}
	o.Origin = wallLo.Int64
	o.Wall = [2]int64{0, wallHi.Int64 - wallLo.Int64}
	if o.Wall[1] < 0 || o.Wall[1] > maxWallSpan {
		// Nonsense wall times (MinInt64 beside real ones) overflow the
		// axis's arithmetic, in Go and in SQL: the run is drawn on its
		// Lamport axis only (its wall axis was a 500 that read "Scan
		// error on column b": found by the adversarial pass of issue 22).
		o.wallErr = fmt.Sprintf("%s: run %d: broken trace: its wall times go from %d to %d ns, too far apart for a wall axis (axis=lamport draws it)", v.st.Path(), run, wallLo.Int64, wallHi.Int64)
		o.Wall = [2]int64{0, 0}
	}

	// Lanes: the run's processes, and any other process its events name.
	var maxProc sql.NullInt64
	if err := db.QueryRow(`SELECT max(proc) FROM events WHERE run = ?`, run).Scan(&maxProc); err != nil {
		return nil, v.fail("count the processes", err)
	}
	n := v.run.Nodes
	if maxProc.Valid {
		n = max(n, int(maxProc.Int64)+1)
	}
	if n > maxLanes {
		// The run is fine, the viewer cannot draw it: a 4xx that says so.
		return nil, &apiError{http.StatusUnprocessableEntity, fmt.Sprintf("%s: run %d has %d processes; the viewer draws at most %d (dmx render draws a window of any run: --procs)", v.st.Path(), run, n, maxLanes)}
	}
	var roles map[int]string
	if v.srv.opts.Roles != nil {
		roles = v.srv.opts.Roles(v.run)
	}
	for p := 0; p < n; p++ {
		ln := laneJSON{Proc: p, Name: fmt.Sprintf("P%d", p), Role: roles[p]}
		if p < len(v.run.Names) && v.run.Names[p] != "" {
			ln.Name += " " + v.run.Names[p]
		}
		var last sql.NullInt64
		if err := db.QueryRow(`SELECT max(seq) FROM events WHERE run = ? AND proc = ?`, run, p).Scan(&last); err != nil {
			return nil, v.fail("count the events", err)
		}
		ln.Events = last.Int64
		o.Events += last.Int64
		o.Lanes = append(o.Lanes, ln)
	}

	// Message types: all of the run's, coloured by name as the static
	// pictures colour them (render/palette), so that a type keeps its
	// colour whatever the window, here and in dmx render's pictures.
	rows, err := db.Query(`SELECT DISTINCT type FROM messages WHERE run = ? AND type IS NOT NULL`, run)
	if err != nil {
		return nil, v.fail("read the message types", err)
	}
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return nil, v.fail("read the message types", err)
		}
		o.Types = append(o.Types, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, v.fail("read the message types", err)
	}
	var declared []string
	if v.srv.opts.MsgTypes != nil {
		declared = v.srv.opts.MsgTypes(v.run)
	}
	o.Colors.Types = palette.Types(declared, o.Types)
	o.Types = palette.Order(declared, o.Types) // the legend's order
	if err := v.readSections(o); err != nil {
		return nil, err
	}
	return o, nil
}

// maxLanes bounds the processes of a run the page draws: past it, lanes
// would be thinner than a pixel.
const maxLanes = 4096

func (v *runView) fail(what string, err error) error {
	return fmt.Errorf("%s: run %d: %s: %w", v.st.Path(), v.run.ID, what, err)
}

// csEvent is a critical-section event or a crash, as readSections reads
// them.
type csEvent struct {
	proc int
	kind trace.Kind
	res  string
	pt   point
}

// readSections reads the run's critical-section events and crashes (from
// their partial indexes: a few per cent of the events) and pairs them into
// sections and down times.
func (v *runView) readSections(o *outline) error {
	db, run := v.st.DB(), v.run.ID
	var evs []csEvent
	read := func(q string) error {
		rows, err := db.Query(q, run)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var e csEvent
			var res sql.NullString
			if err := rows.Scan(&e.pt.ID, &e.proc, &e.pt.Seq, &e.kind, &res, &e.pt.Lamport, &e.pt.Wall); err != nil {
				return err
			}
			e.res = trace.ShortName(res.String)
			e.pt.Wall -= o.Origin
			evs = append(evs, e)
		}
		return rows.Err()
	}
	if err := read(`SELECT id, proc, seq, kind, resource, lamport, wall_ns FROM events
		WHERE run = ? AND (kind = 'cs_request' OR kind = 'cs_enter' OR kind = 'cs_exit')`); err != nil {
		return v.fail("read the critical sections", err)
	}
	// +run: through the partial index of crashes, not a time index.
	if err := read(`SELECT id, proc, seq, kind, resource, lamport, wall_ns FROM events WHERE +run = ? AND kind = 'crash'`); err != nil {
		return v.fail("read the crashes", err)
	}
	slices.SortFunc(evs, func(a, b csEvent) int { return cmp.Or(cmp.Compare(a.proc, b.proc), cmp.Compare(a.pt.Seq, b.pt.Seq)) })

	o.sections = map[int]map[string][]*section{}
	resources := map[string]bool{}
	open := map[string]*section{} // resource -> the section open (or requested) at the current process
	add := func(s *section) {
		m := o.sections[s.Proc]
		if m == nil {
			m = map[string][]*section{}
			o.sections[s.Proc] = m
		}
		m[s.Res] = append(m[s.Res], s)
		o.Sections++
	}
	flush := func(crash *point) {
		for _, res := range slices.Sorted(maps.Keys(open)) {
			s := open[res]
			if crash != nil {
				s.Exit, s.Crashed = crash, true
			}
			add(s)
		}
		clear(open)
	}
	for i, e := range evs {
		if i > 0 && evs[i-1].proc != e.proc {
			flush(nil)
		}
		pt := e.pt
		switch e.kind {
		case trace.KindCSRequest:
			if s := open[e.res]; s != nil {
				s.stop = &pt // a request after a request: the first was never granted
				add(s)
			}
			open[e.res] = &section{Proc: e.proc, Res: e.res, Request: &pt}
			resources[e.res] = true
		case trace.KindCSEnter:
			s := open[e.res]
			if s == nil || s.Enter != nil {
				if s != nil {
					s.stop = &pt
					add(s)
				}
				s = &section{Proc: e.proc, Res: e.res}
				open[e.res] = s
			}
			s.Enter = &pt
			resources[e.res] = true
		case trace.KindCSExit:
			s := open[e.res]
			if s == nil {
				s = &section{Proc: e.proc, Res: e.res}
			}
			s.Exit = &pt
			add(s)
			delete(open, e.res)
		case trace.KindCrash:
			flush(&pt)
			d := down{Proc: e.proc, Crash: pt}
			var nx point
			err := db.QueryRow(`SELECT id, seq, lamport, wall_ns FROM events WHERE run = ? AND proc = ? AND seq = ?`, run, e.proc, pt.Seq+1).
				Scan(&nx.ID, &nx.Seq, &nx.Lamport, &nx.Wall)
			switch {
			case err == nil:
				nx.Wall -= o.Origin
				d.Until = &nx
			case !errors.Is(err, sql.ErrNoRows):
				return v.fail("read a recovery", err)
			}
			o.Downs = append(o.Downs, d)
		}
	}
	flush(nil)
	o.Resources = slices.Sorted(maps.Keys(resources))
	o.Colors.Resources = palette.ResourceColours(o.Resources)
	return nil
}

// sectionsIn returns the sections of procs (nil: all) that overlap
// [lo, hi] on the axis, at most limit of them.
func (o *outline) sectionsIn(a axis, lo, hi int64, procs []int, limit int) (out []*section, more bool) {
	each := func(p int) bool {
		for _, res := range slices.Sorted(maps.Keys(o.sections[p])) {
			list := o.sections[p][res]
			// The sections of one process on one resource are disjoint
			// and in order: the first that ends at lo or later, then
			// those that start by hi.
			i, _ := slices.BinarySearchFunc(list, lo, func(s *section, lo int64) int { return cmp.Compare(s.endKey(a), lo) })
			for ; i < len(list) && list[i].start().key(a) <= hi; i++ {
				if len(out) >= limit {
					return false
				}
				out = append(out, list[i])
			}
		}
		return true
	}
	if procs == nil {
		for p := range o.Lanes {
			if !each(p) {
				return out, true
			}
		}
		return out, false
	}
	for _, p := range procs {
		if !each(p) {
			return out, true
		}
	}
	return out, false
}
