package trace

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestImportedDetail: what EncodeImported writes reads back through Origin,
// Source and Links, and the kind's own accessor still reads its members.
func TestImportedDetail(t *testing.T) {
	o := Origin{Src: "lock.log:12", Text: `enter "cs" <now>`, Fields: []Field{{"date", "4/24/2015"}, {"ip", "1.2.3.4"}}}
	l := Links{Recv: []Link{{MsgID(1, 3), 1}}, Sent: []Link{{MsgID(0, 7), 2}, {MsgID(0, 8), 3}}}
	for _, tc := range []struct {
		name string
		ev   Event
		d    Detail
		o    Origin
		l    Links
		want string
	}{
		{"nothing", Event{Kind: KindInternal}, nil, Origin{}, Links{}, ``},
		{"origin only", Event{Kind: KindCSEnter, Resource: "cs"}, nil, Origin{Src: "a.log:3"}, Links{},
			`{"src":"a.log:3"}`},
		{"all", Event{Kind: KindInternal}, nil, o, l,
			`{"src":"lock.log:12","text":"enter \"cs\" \u003cnow\u003e","fields":{"date":"4/24/2015","ip":"1.2.3.4"},"recv_msgs":[[4294967299,1]],"sent_msgs":[[7,2],[8,3]]}`},
		{"leader", Event{Kind: KindLeader, Peer: 2}, Leader{Leader: 2, Term: 4}, Origin{Src: "e.log:9", Text: "leader is b"}, Links{},
			`{"leader":2,"term":4,"src":"e.log:9","text":"leader is b"}`},
		{"wait with links", Event{Kind: KindWait, Resource: "cs"}, Wait{WaitingFor: []int{0, 2}}, Origin{Src: "w.log:1"}, Links{Recv: []Link{{5, 0}}},
			`{"waiting_for":[0,2],"src":"w.log:1","recv_msgs":[[5,0]]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := EncodeImported(tc.d, tc.o, tc.l)
			if string(got) != tc.want {
				t.Fatalf("EncodeImported:\n got %s\nwant %s", got, tc.want)
			}
			if len(got) > 0 && !json.Valid(got) {
				t.Fatalf("not JSON: %s", got)
			}
			ev := tc.ev
			ev.Proc, ev.Seq, ev.Detail = 1, 2, got
			o, err := ev.Origin()
			if len(o.Fields) == 0 {
				o.Fields = nil // none read is none written
			}
			if err != nil || !reflect.DeepEqual(o, tc.o) {
				t.Errorf("Origin = %+v, %v; want %+v", o, err, tc.o)
			}
			if src := ev.Source(); src != tc.o.Src {
				t.Errorf("Source = %q, want %q", src, tc.o.Src)
			}
			gl, err := ev.Links()
			if err != nil || !reflect.DeepEqual(gl, tc.l) {
				t.Errorf("Links = %+v, %v; want %+v", gl, err, tc.l)
			}
			d, err := ev.Details()
			if err != nil {
				t.Fatalf("Details: %v", err)
			}
			if tc.d != nil && !reflect.DeepEqual(d, tc.d) {
				t.Errorf("Details = %#v, want %#v", d, tc.d)
			}
		})
	}
}

// TestBadLinks: a detail whose links do not read is an error naming the
// event; Source of an unreadable detail is "".
func TestBadLinks(t *testing.T) {
	for _, detail := range []string{
		`{"recv_msgs":[[1]]}`,
		`{"recv_msgs":[[0,1]]}`,
		`{"sent_msgs":"x"}`,
		`{"sent_msgs":[[1,2,3]]}`,
		`{"sent_msgs":[["a",2]]}`,
	} {
		ev := Event{Proc: 3, Seq: 4, Kind: KindInternal, Detail: json.RawMessage(detail)}
		if _, err := ev.Links(); err == nil || !strings.HasPrefix(err.Error(), "P3#4 internal: ") {
			t.Errorf("Links of %s: error %v, want one naming P3#4", detail, err)
		}
	}
	ev := Event{Proc: 3, Seq: 4, Kind: KindInternal, Detail: json.RawMessage(`{"src":`)}
	if src := ev.Source(); src != "" {
		t.Errorf("Source of a broken detail = %q", src)
	}
}

// TestNoSeed: an imported run has no seed; it is stored as an empty text and read back
// as NoSeed, while a run of seed 0 keeps its seed.
func TestNoSeed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	s, imp := begin(t, path, Run{Algorithm: "shiviz", Nodes: 2, Mode: "import", NoSeed: true, Seed: 9})
	defer s.Close()
	sim, err := s.BeginRun(Run{Algorithm: "central", Nodes: 2, Mode: "sim"})
	if err != nil {
		t.Fatal(err)
	}
	if got := query(t, s, `SELECT quote(seed) FROM runs ORDER BY id`); !reflect.DeepEqual(got, []string{"''", "'0'"}) {
		t.Errorf("seed column = %q", got)
	}
	runs, err := s.Runs()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].ID != imp || !runs[0].NoSeed || runs[0].Seed != 0 || runs[1].ID != sim || runs[1].NoSeed {
		t.Errorf("runs = %+v", runs)
	}
}

// FuzzImported feeds arbitrary details to the accessors of imported events.
// They must not panic, their errors name the event, and what they read
// encodes to a detail that reads back the same.
func FuzzImported(f *testing.F) {
	f.Add([]byte(`{"src":"a.log:1","text":"t","fields":{"x":"1"},"recv_msgs":[[1,0]],"sent_msgs":[[2,1],[3,2]]}`))
	f.Add([]byte(`{"leader":2,"term":4,"src":"e.log:9","sent_msgs":[["4",1.0]]}`))
	f.Add([]byte(`{"fields":{"a":1,"b":true},"recv_msgs":null}`))
	f.Add([]byte(`{"src":"x","src":"y"}`))
	f.Fuzz(func(t *testing.T, detail []byte) {
		ev := Event{Proc: 1, Seq: 2, Kind: KindInternal, Detail: detail}
		_ = ev.Source()
		o, oerr := ev.Origin()
		l, lerr := ev.Links()
		for _, err := range []error{oerr, lerr} {
			if err != nil && !strings.HasPrefix(err.Error(), ev.String()+": ") {
				t.Fatalf("error %q does not name the event", err)
			}
		}
		if oerr != nil || lerr != nil {
			return
		}
		again := Event{Proc: 1, Seq: 2, Kind: KindInternal, Detail: EncodeImported(nil, o, l)}
		o2, err := again.Origin()
		if err != nil {
			t.Fatalf("re-encoded origin %s: %v", again.Detail, err)
		}
		l2, err := again.Links()
		if err != nil {
			t.Fatalf("re-encoded links %s: %v", again.Detail, err)
		}
		if len(o.Fields) == 0 {
			o.Fields = nil
		}
		if len(o2.Fields) == 0 {
			o2.Fields = nil
		}
		if len(l.Recv) == 0 {
			l.Recv = nil
		}
		if len(l.Sent) == 0 {
			l.Sent = nil
		}
		if !reflect.DeepEqual(o, o2) || !reflect.DeepEqual(l, l2) {
			t.Fatalf("%s read as %+v %+v; re-encoded %s reads %+v %+v", detail, o, l, again.Detail, o2, l2)
		}
	})
}
