package viewer

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// sqlRequest is the body of POST /api/sql.
type sqlRequest struct {
	Run   string `json:"run"`
	Query string `json:"query"`
}

// sqlReply is a query's result: at most Options.MaxRows rows, and the
// events they name, placed for the page to highlight.
type sqlReply struct {
	Columns   []string   `json:"columns"`
	Rows      [][]any    `json:"rows"`
	More      bool       `json:"more"` // the query returned more rows than these
	Millis    float64    `json:"ms"`
	Highlight []refPoint `json:"highlight"`
	How       string     `json:"how"` // which columns named the highlighted events
}

// A reply of the SQL box is bounded in bytes as in rows: a value shows its
// first maxCellBytes, and rows stop once their values hold maxReplyBytes
// (one 50 MB value made a 300 MB reply; six queries at once, 7.7 GB).
const (
	maxCellBytes  = 4096
	maxReplyBytes = 4 << 20
)

// cell is a text value as the SQL box shows it: its first maxCellBytes.
func cell(s string) string {
	if len(s) <= maxCellBytes {
		return s
	}
	return fmt.Sprintf("%s… (%d bytes: dmx sql prints it whole)", strings.ToValidUTF8(s[:maxCellBytes], ""), len(s))
}

// readsEvents spots a query over the events table, whose id column then
// names events.
var readsEvents = regexp.MustCompile(`(?i)\b(from|join)\s+events\b`)

func (s *Server) handleSQL(w http.ResponseWriter, r *http.Request) {
	var req sqlRequest
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		s.reply(w, r, nil, badRequest("want a JSON body {\"run\": \"0:1\", \"query\": \"SELECT ...\"}: %v", err))
		return
	}
	v, err := s.run(req.Run)
	if err != nil {
		s.reply(w, r, nil, err)
		return
	}
	if strings.TrimSpace(req.Query) == "" {
		s.reply(w, r, nil, badRequest("the query is empty"))
		return
	}
	res, err := v.query(r.Context(), req.Query)
	s.reply(w, r, res, err)
}

// query runs a user's query over the run's trace, read-only (the store's
// connections refuse writes) and within the server's time limit.
func (v *runView) query(parent context.Context, q string) (*sqlReply, error) {
	o, err := v.outline()
	if err != nil {
		return nil, err
	}
	limit := v.srv.opts.QueryTimeout
	ctx, cancel := context.WithTimeout(parent, limit)
	defer cancel()
	start := time.Now()
	fail := func(err error) error {
		if ctx.Err() == context.DeadlineExceeded {
			return &apiError{http.StatusRequestTimeout, fmt.Sprintf("the query ran longer than %v and was stopped", limit)}
		}
		return badRequest("%v", err)
	}
	// The store's query path: its connections refuse to write (and to
	// attach or write another file), and ctx stops the query in time.
	rows, err := v.st.Query(ctx, q)
	if err != nil {
		return nil, fail(err)
	}
	defer rows.Close()
	cols := rows.Columns()
	rep := &sqlReply{Columns: cols, Rows: [][]any{}, Highlight: []refPoint{}}
	// Which columns name events.
	var idCols []int
	procCol, seqCol := -1, -1
	var how []string
	for i, c := range cols {
		lc := strings.ToLower(c)
		switch {
		case lc == "event" || strings.HasSuffix(lc, "_event") || (lc == "id" && readsEvents.MatchString(q)):
			idCols = append(idCols, i)
			how = append(how, c)
		case lc == "proc" && procCol < 0:
			procCol = i
		case lc == "seq" && seqCol < 0:
			seqCol = i
		}
	}
	useRef := len(idCols) == 0 && procCol >= 0 && seqCol >= 0
	if useRef {
		how = append(how, cols[procCol]+", "+cols[seqCol])
	}
	size := 0 // bytes of the values in rep.Rows, about
	ids := map[int64]bool{}
	type pr struct{ p, s int64 }
	refs := map[pr]bool{}
	for {
		vals, err := rows.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fail(err)
		}
		if len(rep.Rows) >= v.srv.opts.MaxRows || size >= maxReplyBytes {
			rep.More = true
			break
		}
		row := make([]any, len(cols))
		for i, x := range vals {
			switch x := x.(type) {
			case []byte:
				if !utf8.Valid(x) {
					row[i] = fmt.Sprintf("(%d bytes)", len(x))
				} else {
					row[i] = cell(string(x))
				}
			case string:
				row[i] = cell(x)
			default:
				row[i] = x
			}
			if s, ok := row[i].(string); ok {
				size += len(s)
			} else {
				size += 24
			}
		}
		rep.Rows = append(rep.Rows, row)
		for _, c := range idCols {
			if id, ok := vals[c].(int64); ok {
				ids[id] = true
			}
		}
		if useRef {
			p, ok1 := vals[procCol].(int64)
			sq, ok2 := vals[seqCol].(int64)
			if ok1 && ok2 {
				refs[pr{p, sq}] = true
			}
		}
	}
	rep.Millis = float64(time.Since(start).Microseconds()) / 1000
	rows.Close()
	// Place the events named, those of this run.
	db := v.st.DB()
	for id := range ids {
		rp := refPoint{}
		err := db.QueryRow(`SELECT proc, id, seq, lamport, wall_ns FROM events WHERE id = ? AND run = ?`, id, v.run.ID).
			Scan(&rp.Proc, &rp.ID, &rp.Seq, &rp.Lamport, &rp.Wall)
		if err == nil {
			rp.Wall -= o.Origin
			rep.Highlight = append(rep.Highlight, rp)
		} else if !errors.Is(err, sql.ErrNoRows) {
			return nil, v.fail("place a highlighted event", err)
		}
	}
	for r := range refs {
		rp := refPoint{Proc: int(r.p)}
		err := db.QueryRow(`SELECT id, seq, lamport, wall_ns FROM events WHERE run = ? AND proc = ? AND seq = ?`, v.run.ID, r.p, r.s).
			Scan(&rp.ID, &rp.Seq, &rp.Lamport, &rp.Wall)
		if err == nil {
			rp.Wall -= o.Origin
			rep.Highlight = append(rep.Highlight, rp)
		} else if !errors.Is(err, sql.ErrNoRows) {
			return nil, v.fail("place a highlighted event", err)
		}
	}
	sortPoints(rep.Highlight)
	if len(how) > 0 {
		rep.How = strings.Join(how, "; ")
	}
	return rep, nil
}
