package viewer

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/dmxlab/dmx/render/palette"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/render/htmlreport"
	"github.com/dmxlab/dmx/trace"
)

//go:embed page
var pageFS embed.FS

// Options say what the server can do beyond reading traces; cmd/dmx wires
// them to the checks, the algorithms' roles and replay.
type Options struct {
	// Check runs dmx check's checks over a run; nil: the page lists no
	// findings.
	Check func(st *trace.Store, run trace.Run) ([]analyze.Result, error)
	// Roles names the processes' roles at the start of a run; nil: none.
	Roles func(run trace.Run) map[int]string
	// MsgTypes lists the message types a run's algorithm declares, in
	// order (algo.Spec.MsgTypes): they colour the types as the static
	// pictures do (render/palette); nil: the types by name.
	MsgTypes func(run trace.Run) []string
	// State returns the algorithm state of a process right after one of
	// its events (a replay of the run up to it); nil: the page says that
	// this dmx cannot replay, and the endpoint answers 501.
	State func(st *trace.Store, run trace.Run, at trace.Ref) (json.RawMessage, error)
	// QueryTimeout bounds a query of the SQL box (default 5s).
	QueryTimeout time.Duration
	// MaxRows is the most rows of a query the page is sent (default 2000).
	MaxRows int
	// ReadTimeout bounds the reading of a whole request, its body
	// included (default 30s); IdleTimeout a connection kept alive with no
	// request (default 2m).
	ReadTimeout, IdleTimeout time.Duration
	// Log, if set, gets a line per failed request.
	Log io.Writer
	// Sweep, if not nil, makes the table of every run's verdicts (dmx
	// sweep's) that /sweep shows; nil when there is one run.
	Sweep func() (*htmlreport.Sweep, error)
}

// Server serves the page and its API over a set of open traces.
type Server struct {
	opts  Options
	runs  []*runView
	byKey map[string]*runView
	mux   *http.ServeMux
	port  string // the port of the listener, once Serve knows it

	diffMu sync.Mutex
	diffs  map[string]*diffJob

	sweep sweepCache
}

// New makes a server over the runs of stores (opened with trace.Open;
// the caller closes them after the server is done). The runs are keyed
// "T:R": the store's index in stores and the run's id.
func New(stores []*trace.Store, opts Options) (*Server, error) {
	if opts.QueryTimeout <= 0 {
		opts.QueryTimeout = 5 * time.Second
	}
	if opts.MaxRows <= 0 {
		opts.MaxRows = 2000
	}
	if opts.ReadTimeout <= 0 {
		opts.ReadTimeout = 30 * time.Second
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = 2 * time.Minute
	}
	s := &Server{opts: opts, byKey: map[string]*runView{}, diffs: map[string]*diffJob{}}
	for i, st := range stores {
		runs, err := st.Runs()
		if err != nil {
			return nil, err
		}
		hasL, err := st.HasIndex(trace.LamportIndex)
		if err != nil {
			return nil, err
		}
		hasW, err := st.HasIndex(trace.WallIndex)
		if err != nil {
			return nil, err
		}
		for _, r := range runs {
			v := &runView{key: fmt.Sprintf("%d:%d", i, r.ID), st: st, run: r, srv: s, hasLamport: hasL, hasWall: hasW}
			s.runs = append(s.runs, v)
			s.byKey[v.key] = v
		}
	}
	if len(s.runs) == 0 {
		return nil, errors.New("the traces hold no runs")
	}
	s.routes()
	return s, nil
}

// Warm starts reading the first run (its outline, overview and findings)
// in the background, so that the page finds them ready.
func (s *Server) Warm() {
	v := s.runs[0]
	go func() {
		if _, err := v.outline(); err != nil {
			return
		}
		v.overview(lamportAxis)
		v.startCheck()
	}()
}

// Serve answers requests on ln until it is closed. Requests must name
// ln's port in their Host.
func (s *Server) Serve(ln net.Listener) error {
	if _, port, err := net.SplitHostPort(ln.Addr().String()); err == nil {
		s.port = port
	}
	// Every connection is bounded in time: headers, a whole request (the
	// SQL box's body: 3,000 dripping POSTs stayed open for ever) and an
	// idle keep-alive. Replies are not: a big window takes its time to
	// write to a slow browser.
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: min(10*time.Second, s.opts.ReadTimeout),
		ReadTimeout: s.opts.ReadTimeout, IdleTimeout: s.opts.IdleTimeout}
	err := hs.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// Handler returns the server's handler, with its guards: the Host check,
// same-origin writes, and recovery from a handler's panic.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.guard) }

func (s *Server) routes() {
	m := http.NewServeMux()
	page, _ := fs.Sub(pageFS, "page")
	files := http.FileServer(http.FS(page))
	m.Handle("/", pageOnly(files))
	// The palette the static pictures use, so that the page colours a
	// type, a resource and a mark as they do.
	m.HandleFunc("GET /palette.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		io.WriteString(w, palette.JS())
	})
	m.HandleFunc("GET /api/runs", s.handleRuns)
	m.HandleFunc("GET /sweep", s.handleSweep)
	m.HandleFunc("GET /api/outline", s.withRun(s.handleOutline))
	m.HandleFunc("GET /api/overview", s.withRun(s.handleOverview))
	m.HandleFunc("GET /api/window", s.withRun(s.handleWindow))
	m.HandleFunc("GET /api/density", s.withRun(s.handleDensity))
	m.HandleFunc("GET /api/event", s.withRun(s.handleEvent))
	m.HandleFunc("GET /api/state", s.withRun(s.handleState))
	m.HandleFunc("GET /api/findings", s.withRun(s.handleFindings))
	m.HandleFunc("POST /api/sql", s.handleSQL)
	m.HandleFunc("GET /api/diff", s.handleDiff)
	m.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		httpError(w, http.StatusNotFound, "no such API endpoint: %s %s", r.Method, r.URL.Path)
	})
	s.mux = m
}

// pageOnly serves the page's files to GET and HEAD requests.
func pageOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			httpError(w, http.StatusMethodNotAllowed, "%s %s: the page is read with GET", r.Method, r.URL.Path)
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		h.ServeHTTP(w, r)
	})
}

// guard checks a request before it reaches the routes.
func (s *Server) guard(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if p := recover(); p != nil {
			if s.opts.Log != nil {
				fmt.Fprintf(s.opts.Log, "dmx serve: internal error on %s: %v\n%s", r.URL, p, debug.Stack())
			}
			httpError(w, http.StatusInternalServerError, "internal error (please report it): %v", p)
		}
	}()
	if !s.hostOK(r.Host) {
		httpError(w, http.StatusForbidden, "refused: Host %q is not this server (it answers to a loopback address, 127.0.0.1:%s, [::1]:%s, or localhost:%s only)", r.Host, s.port, s.port, s.port)
		return
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			httpError(w, http.StatusForbidden, "refused: a request from another origin (%s)", o)
			return
		}
	}
	if r.Method == http.MethodPost && !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		// A page of another site can post a form or text/plain without
		// asking; a JSON body needs a preflight, which is never granted.
		httpError(w, http.StatusUnsupportedMediaType, "POST wants a JSON body (Content-Type: application/json)")
		return
	}
	s.mux.ServeHTTP(w, r)
}

// hostOK accepts a Host header that names this server: a loopback address
// or localhost, with the listener's port (the server listens on loopback
// only: Loopback). A DNS name other than localhost is what a
// DNS-rebinding attack sends, and another address is not this server's:
// both are refused.
func (s *Server) hostOK(host string) bool {
	h, port, err := net.SplitHostPort(host)
	if err != nil {
		return false
	}
	if s.port != "" && port != s.port {
		return false
	}
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// Loopback returns an error unless addr (host:port, as net.Listen takes
// it) is a loopback address or localhost: the server answers whoever
// reaches it with the traces and SQL over them, so it is not offered to
// the network.
func Loopback(addr string) error {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if strings.EqualFold(h, "localhost") {
		return nil
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("address %q is not a loopback address: dmx serve answers whoever reaches it with the traces and SQL over them, so it listens on 127.0.0.1, ::1 or localhost only (to look from another machine: ssh -L 8080:127.0.0.1:8080 HOST, then dmx serve --addr 127.0.0.1:8080 there)", addr)
}

// apiError is an error with the HTTP status it should be answered with.
type apiError struct {
	code int
	msg  string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &apiError{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

func httpError(w http.ResponseWriter, code int, format string, args ...any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"error": fmt.Sprintf(format, args...)})
}

// reply writes v as JSON, or err with its status (500 for an error that
// is not an apiError: a trace that could not be read).
func (s *Server) reply(w http.ResponseWriter, r *http.Request, v any, err error) {
	if err != nil {
		code := http.StatusInternalServerError
		var ae *apiError
		if errors.As(err, &ae) {
			code = ae.code
		}
		if s.opts.Log != nil && code >= 500 {
			fmt.Fprintf(s.opts.Log, "dmx serve: %s: %v\n", r.URL, err)
		}
		httpError(w, code, "%s", err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	var b []byte
	if m, ok := v.(json.Marshaler); ok {
		// Written as the value writes itself: json.Marshal would check
		// and compact it again (a sixth of a big window's time).
		b, err = m.MarshalJSON()
	} else {
		b, err = json.Marshal(v)
	}
	if err != nil {
		httpError(w, http.StatusInternalServerError, "encode reply: %v", err)
		return
	}
	w.Write(b)
}

// withRun resolves the run= parameter.
func (s *Server) withRun(h func(*runView, *http.Request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := s.run(r.URL.Query().Get("run"))
		if err != nil {
			s.reply(w, r, nil, err)
			return
		}
		res, err := h(v, r)
		s.reply(w, r, res, err)
	}
}

func (s *Server) run(key string) (*runView, error) {
	if key == "" {
		return s.runs[0], nil
	}
	v := s.byKey[key]
	if v == nil {
		return nil, &apiError{http.StatusNotFound, fmt.Sprintf("no run %q (runs are named trace:run, as /api/runs lists them)", key)}
	}
	return v, nil
}

// runJSON describes a run for the page's run menus.
type runJSON struct {
	Key       string `json:"key"`
	File      string `json:"file"`
	ID        int64  `json:"id"`
	Algorithm string `json:"algorithm"`
	Nodes     int    `json:"nodes"`
	Seed      string `json:"seed"`
	Mode      string `json:"mode"`
	Complete  bool   `json:"complete"`
	Status    string `json:"status"`
	Params    any    `json:"params,omitempty"`
	Faults    any    `json:"faults,omitempty"`
}

func (v *runView) describe() runJSON {
	r := v.run
	seed := strconv.FormatUint(r.Seed, 10)
	if r.NoSeed {
		seed = ""
	}
	return runJSON{Key: v.key, File: v.st.Path(), ID: r.ID, Algorithm: r.Algorithm, Nodes: r.Nodes, Seed: seed,
		Mode: r.Mode, Complete: r.Complete, Status: r.Status, Params: r.Params, Faults: r.Faults}
}

func (s *Server) handleRuns(w http.ResponseWriter, r *http.Request) {
	out := struct {
		Runs   []runJSON `json:"runs"`
		Replay bool      `json:"replay"`
	}{Replay: s.opts.State != nil}
	for _, v := range s.runs {
		out.Runs = append(out.Runs, v.describe())
	}
	s.reply(w, r, out, nil)
}

// Query parameters.

func intParam(r *http.Request, name string, def int64) (int64, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, badRequest("%s=%q: want a whole number", name, s)
	}
	return n, nil
}

func axisParam(r *http.Request) (axis, error) {
	switch a := r.URL.Query().Get("axis"); a {
	case "", "lamport":
		return lamportAxis, nil
	case "wall":
		return wallAxis, nil
	default:
		return 0, badRequest("axis=%q: want lamport or wall", a)
	}
}

// procsParam reads procs=0,2,5; nil for all.
func procsParam(r *http.Request, lanes int) ([]int, error) {
	s := r.URL.Query().Get("procs")
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		p, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(f), "P"))
		if err != nil || p < 0 || p >= lanes {
			return nil, badRequest("procs=%q: want process numbers 0..%d separated by commas", s, lanes-1)
		}
		out = append(out, p)
	}
	return out, nil
}
