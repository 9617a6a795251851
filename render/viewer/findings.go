package viewer

import (
	"database/sql"
	"errors"
	"net/http"
	"time"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/trace"
)

// checkJob is dmx check run over one run in the background: the page
// shows the findings when they are ready.
type checkJob struct {
	done    chan struct{}
	started time.Time
	res     *checkReply
}

// checkReply is what /api/findings answers.
type checkReply struct {
	State    string        `json:"state"` // "running", "done", "none" (no checks wired), "error"
	Error    string        `json:"error,omitempty"`
	Seconds  float64       `json:"seconds"`
	Verdict  string        `json:"verdict,omitempty"`
	Checks   []checkJSON   `json:"checks"`
	Findings []findingJSON `json:"findings"`
}

type checkJSON struct {
	Check    string `json:"check"`
	Verdict  string `json:"verdict"`
	Findings int    `json:"findings"`
	Note     string `json:"note,omitempty"`
}

// findingJSON is a finding with its events placed, so that the page can
// move to it and draw it in any window.
type findingJSON struct {
	N       int        `json:"n"` // 1-based, as dmx render --finding numbers them
	Check   string     `json:"check"`
	Message string     `json:"message"`
	Events  []refPoint `json:"events"`
	Parts   []partJSON `json:"parts,omitempty"`
}

type partJSON struct {
	Role   string     `json:"role"`
	Label  string     `json:"label,omitempty"`
	From   int        `json:"from"`
	To     int        `json:"to"`
	Events []refPoint `json:"events"`
}

// refPoint is an event named and placed; Seq 0 if the run has no such
// event.
type refPoint struct {
	Proc int `json:"p"`
	point
}

// newCheckReply is a reply in state with empty lists (the page reads
// them as arrays, never null).
func newCheckReply(state string) *checkReply {
	return &checkReply{State: state, Checks: []checkJSON{}, Findings: []findingJSON{}}
}

func (s *Server) handleFindings(v *runView, r *http.Request) (any, error) {
	if s.opts.Check == nil {
		return newCheckReply("none"), nil
	}
	j := v.startCheck()
	wait, err := intParam(r, "wait", 0) // ms to wait for the checks to finish
	if err != nil {
		return nil, err
	}
	select {
	case <-j.done:
		return j.res, nil
	case <-time.After(time.Duration(min(max(wait, 0), 10000)) * time.Millisecond):
		rep := newCheckReply("running")
		rep.Seconds = time.Since(j.started).Seconds()
		return rep, nil
	}
}

// startCheck starts the checks of the run once and returns their job.
func (v *runView) startCheck() *checkJob {
	v.checkMu.Lock()
	defer v.checkMu.Unlock()
	if v.check != nil {
		return v.check
	}
	j := &checkJob{done: make(chan struct{}), started: time.Now()}
	v.check = j
	if v.srv.opts.Check == nil {
		j.res = newCheckReply("none")
		close(j.done)
		return j
	}
	go func() {
		defer close(j.done)
		j.res = v.runChecks()
		j.res.Seconds = time.Since(j.started).Seconds()
	}()
	return j
}

func (v *runView) runChecks() *checkReply {
	fail := func(err error) *checkReply {
		rep := newCheckReply("error")
		rep.Error = err.Error()
		return rep
	}
	o, err := v.outline()
	if err != nil {
		return fail(err)
	}
	results, err := v.srv.opts.Check(v.st, v.run)
	if err != nil {
		return fail(err)
	}
	rep := newCheckReply("done")
	rep.Verdict = string(analyze.Summarize(results))
	look, err := v.st.DB().Prepare(`SELECT id, lamport, wall_ns FROM events WHERE run = ? AND proc = ? AND seq = ?`)
	if err != nil {
		return fail(v.fail("prepare an event lookup", err))
	}
	defer look.Close()
	place := func(refs []trace.Ref) []refPoint {
		out := make([]refPoint, 0, len(refs))
		for _, r := range refs {
			rp := refPoint{Proc: r.Proc}
			err := look.QueryRow(v.run.ID, r.Proc, r.Seq).Scan(&rp.ID, &rp.Lamport, &rp.Wall)
			if err == nil {
				rp.Seq = r.Seq
				rp.Wall -= o.Origin
			} else if !errors.Is(err, sql.ErrNoRows) {
				rp.Seq = 0
			}
			out = append(out, rp)
		}
		return out
	}
	for _, res := range results {
		c := checkJSON{Check: res.Check, Verdict: string(res.Verdict), Findings: len(res.Findings), Note: res.Note}
		if res.Err != nil {
			c.Note = res.Err.Error()
		}
		rep.Checks = append(rep.Checks, c)
		for _, f := range res.Findings {
			fj := findingJSON{N: len(rep.Findings) + 1, Check: f.Check, Message: f.Text(), Events: place(f.Events)}
			for _, p := range f.Parts {
				fj.Parts = append(fj.Parts, partJSON{Role: string(p.Role), Label: p.Label, From: p.From, To: p.To, Events: place(p.Events)})
			}
			rep.Findings = append(rep.Findings, fj)
		}
	}
	return rep
}
