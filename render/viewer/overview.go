package viewer

import (
	"fmt"
	"net/http"
	"strings"
)

// fineN is how many slices of the run the server counts each process's
// events in, per axis: the overview strip and the zoomed-out views are
// drawn from these counts. Fewer for runs of many processes, so that the
// counts stay a few MB.
func fineN(lanes int) int {
	return max(256, min(4096, (4<<20)/max(lanes, 1)))
}

// overview is the whole run on one axis, in slices: how many events and
// how much of each resource's critical sections each holds. It is what the
// page's overview strip draws.
type overview struct {
	Axis   string               `json:"axis"`
	Lo     int64                `json:"lo"`
	Hi     int64                `json:"hi"`
	N      int                  `json:"n"`
	Counts []int64              `json:"counts"`
	CS     map[string][]float64 `json:"cs"` // resource -> processes inside, on average over each slice

	fineN int
	fine  [][]uint32 // per lane, fineN slices of [Lo, Hi]
}

// overviewSlices is the resolution of the strip the page draws.
const overviewSlices = 1024

func (s *Server) handleOverview(v *runView, r *http.Request) (any, error) {
	a, err := axisParam(r)
	if err != nil {
		return nil, err
	}
	if err := v.axisOK(a); err != nil {
		return nil, err
	}
	return v.overview(a)
}

// overview computes the run's overview on axis a once.
func (v *runView) overview(a axis) (*overview, error) {
	v.ovMu.Lock()
	defer v.ovMu.Unlock()
	if v.ov[a] != nil {
		return v.ov[a], nil
	}
	o, err := v.outline()
	if err != nil {
		return nil, err
	}
	lo, hi := o.Lamport[0], o.Lamport[1]
	if a == wallAxis {
		lo, hi = o.Wall[0], o.Wall[1]
	}
	ov := &overview{Axis: a.String(), Lo: lo, Hi: hi, fineN: fineN(len(o.Lanes))}
	ov.fine = make([][]uint32, len(o.Lanes))
	for i := range ov.fine {
		ov.fine[i] = make([]uint32, ov.fineN)
	}
	err = v.countSlices(a, o, lo, hi, ov.fineN, nil, func(p, b int, n int64) { ov.fine[p][b] += uint32(n) })
	if err != nil {
		return nil, err
	}
	ov.N = min(overviewSlices, ov.fineN)
	per := ov.fineN / ov.N
	ov.Counts = make([]int64, ov.N)
	for _, lane := range ov.fine {
		for b, n := range lane {
			ov.Counts[min(b/per, ov.N-1)] += int64(n)
		}
	}
	ov.CS = map[string][]float64{}
	secs, _ := o.sectionsIn(a, lo, hi, nil, 1<<31-1)
	for _, sec := range secs {
		occ := ov.CS[sec.Res]
		if occ == nil {
			occ = make([]float64, ov.N)
			ov.CS[sec.Res] = occ
		}
		if sec.Enter != nil {
			spread(occ, lo, hi, sec.Enter.key(a), min(sec.endKey(a), hi))
		}
	}
	v.ov[a] = ov
	return ov, nil
}

// spread adds to each slice of occ (slices of [lo, hi]) the fraction of it
// that [from, to] covers.
func spread(occ []float64, lo, hi, from, to int64) {
	n := len(occ)
	width := float64(hi-lo+1) / float64(n)
	if to < from || width <= 0 {
		return
	}
	f, t := float64(from-lo), float64(to-lo+1)
	for b := max(0, int(f/width)); b < n && float64(b)*width < t; b++ {
		s0, s1 := float64(b)*width, float64(b+1)*width
		if c := min(s1, t) - max(s0, f); c > 0 {
			occ[b] += c / width
		}
	}
}

// countSlices counts the events of each process (of procs; nil: all) in n
// slices of [lo, hi] on axis a, calling add(proc, slice, count). Through
// a time index it reads only the index.
func (v *runView) countSlices(a axis, o *outline, lo, hi int64, n int, procs []int, add func(p, b int, n int64)) error {
	idx, _ := v.indexed(a)
	base := lo
	if a == wallAxis {
		base += o.Origin
	}
	width := hi - lo + 1
	q := fmt.Sprintf(`SELECT proc, (%[1]s - ?2) * ?3 / ?4 AS b, count(*) FROM events %[2]s
		WHERE %[1]s BETWEEN ?2 AND ?5 AND run = ?1%[3]s GROUP BY proc, b`, a.column(), idx, procFilter(procs))
	rows, err := v.st.DB().Query(q, v.run.ID, base, n, width, base+width-1)
	if err != nil {
		return v.fail("count events over time", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p, b int
		var c int64
		if err := rows.Scan(&p, &b, &c); err != nil {
			return v.fail("count events over time", err)
		}
		if p >= 0 && p < len(o.Lanes) && b >= 0 && b < n {
			add(p, b, c)
		}
	}
	if err := rows.Err(); err != nil {
		return v.fail("count events over time", err)
	}
	return nil
}

// procFilter is the SQL condition that keeps the events of procs (nil:
// no condition). procs are numbers the handler checked.
func procFilter(procs []int) string {
	if procs == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(" AND proc IN (")
	for i, p := range procs {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprint(&b, p)
	}
	b.WriteString(")")
	return b.String()
}

// density is a window too big to draw event by event: per lane, how many
// events each slice of it holds, and how much of it each lane spends in
// critical sections.
type density struct {
	Axis   string                       `json:"axis"`
	Lo     int64                        `json:"lo"`
	Hi     int64                        `json:"hi"`
	N      int                          `json:"n"`
	Exact  bool                         `json:"exact"` // counted for this window, not from the run's slices
	Counts map[int][]int64              `json:"counts"`
	CS     map[int]map[string][]float64 `json:"cs"`
}

// exactDensityMax is the most events a density query counts from the
// index itself; above it, the window is drawn from the run's slices.
const exactDensityMax = 300_000

func (s *Server) handleDensity(v *runView, r *http.Request) (any, error) {
	wp, err := v.windowParams(r)
	if err != nil {
		return nil, err
	}
	n, err := intParam(r, "n", 400)
	if err != nil {
		return nil, err
	}
	if n < 1 || n > 10000 {
		return nil, badRequest("n=%d: want 1..10000 slices", n)
	}
	return v.density(wp.axis, wp.o, wp.lo, wp.hi, int(n), wp.procs)
}

func (v *runView) density(a axis, o *outline, lo, hi int64, n int, procs []int) (*density, error) {
	ov, err := v.overview(a)
	if err != nil {
		return nil, err
	}
	d := &density{Axis: a.String(), Lo: lo, Hi: hi, N: n, Counts: map[int][]int64{}, CS: map[int]map[string][]float64{}}
	lanes := procs
	if lanes == nil {
		for p := range o.Lanes {
			lanes = append(lanes, p)
		}
	}
	for _, p := range lanes {
		d.Counts[p] = make([]int64, n)
	}
	// From the run's slices, spread over the window's; exact where the
	// window is narrow enough that the run's slices would be too coarse
	// and holds few enough events to count them in the index quickly.
	fw := float64(ov.Hi-ov.Lo+1) / float64(ov.fineN)
	f0, f1 := int(float64(lo-ov.Lo)/fw), int(float64(hi-ov.Lo)/fw)
	estimate := int64(0)
	for _, p := range lanes {
		for b := max(f0, 0); b <= min(f1, ov.fineN-1); b++ {
			estimate += int64(ov.fine[p][b])
		}
	}
	if f1-f0 < 2*n && estimate <= exactDensityMax {
		d.Exact = true
		err := v.countSlices(a, o, lo, hi, n, procs, func(p, b int, c int64) {
			if l := d.Counts[p]; l != nil {
				l[b] += c
			}
		})
		if err != nil {
			return nil, err
		}
	} else {
		tmp := make([]float64, n)
		for _, p := range lanes {
			clear(tmp)
			for b := max(f0, 0); b <= min(f1, ov.fineN-1); b++ {
				c := ov.fine[p][b]
				if c == 0 {
					continue
				}
				from := ov.Lo + int64(float64(b)*fw)
				to := ov.Lo + int64(float64(b+1)*fw) - 1
				spreadCount(tmp, lo, hi, from, max(from, to), float64(c))
			}
			for i, x := range tmp {
				d.Counts[p][i] = int64(x + 0.5)
			}
		}
	}
	secs, _ := o.sectionsIn(a, lo, hi, procs, 1<<31-1)
	for _, sec := range secs {
		if sec.Enter == nil {
			continue
		}
		m := d.CS[sec.Proc]
		if m == nil {
			m = map[string][]float64{}
			d.CS[sec.Proc] = m
		}
		occ := m[sec.Res]
		if occ == nil {
			occ = make([]float64, n)
			m[sec.Res] = occ
		}
		spread(occ, lo, hi, max(sec.Enter.key(a), lo), min(sec.endKey(a), hi))
	}
	return d, nil
}

// spreadCount adds c events, spread evenly over [from, to], to the slices
// of [lo, hi] in out.
func spreadCount(out []float64, lo, hi, from, to int64, c float64) {
	f, t := max(from, lo), min(to, hi)
	if t < f {
		return
	}
	span := float64(to - from + 1)
	width := float64(hi-lo+1) / float64(len(out))
	a, z := float64(f-lo), float64(t-lo+1)
	for b := int(a / width); b < len(out) && float64(b)*width < z; b++ {
		if cov := min(float64(b+1)*width, z) - max(float64(b)*width, a); cov > 0 {
			out[b] += c * cov / span
		}
	}
}
