package viewer

import (
	"github.com/dmxlab/dmx/internal/simtest"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// FuzzAPI sends the API any query string: a bad one gets a 4xx with a
// message, never a 5xx or a crash.
//
//	go test ./render/viewer -run XXX -fuzz FuzzAPI -fuzztime 1m
func FuzzAPI(f *testing.F) {
	for _, seed := range [][2]string{
		{"window", "lo=0&hi=50"}, {"window", "axis=wall&lo=0&hi=9&procs=0,1&max=5"}, {"density", "lo=0&hi=99&n=7"},
		{"event", "ref=P0%231"}, {"overview", "axis=wall"}, {"outline", "run=0:1"}, {"diff", "a=0:1&b=0:1"},
		{"window", "lo=-5&hi=-1"}, {"event", "ref=P99%23-1"}, {"density", "lo=1&hi=1&n=10000"}, {"state", "ref=P1%232"},
	} {
		f.Add(seed[0], seed[1])
	}
	st, _ := open(f, simtest.Plan(f, "lamport", 1, lamportReorder))
	srv := newServer(f, Options{}, st)
	f.Fuzz(func(t *testing.T, endpoint, query string) {
		if strings.ContainsAny(endpoint, "/?#% \t\r\n") || strings.ContainsAny(query, "# \t\r\n") {
			return
		}
		target := "/api/" + endpoint + "?" + query
		if _, err := url.ParseRequestURI(target); err != nil {
			return // no client sends it: net/http refuses it before a handler
		}
		req := httptest.NewRequest("GET", target, nil)
		req.Host = "127.0.0.1:80"
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		if rec.Code >= 500 && rec.Code != http.StatusNotImplemented {
			t.Fatalf("/api/%s?%s: %d %s", endpoint, query, rec.Code, rec.Body)
		}
		if rec.Code >= 400 && !strings.Contains(rec.Body.String(), `"error"`) {
			t.Fatalf("/api/%s?%s: %d without a message: %s", endpoint, query, rec.Code, rec.Body)
		}
	})
}
