package plural

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int64
		noun string
		want string
	}{
		{0, "event", "0 events"},
		{1, "event", "1 event"},
		{2, "event", "2 events"},
		{1, "row", "1 row"},
		{12, "row", "12 rows"},
		{1, "process", "1 process"},
		{3, "process", "3 processes"},
		{1, "entry", "1 entry"},
		{10, "entry", "10 entries"},
		{2, "key", "2 keys"},
		{1, "critical section", "1 critical section"},
		{50, "critical section", "50 critical sections"},
		{-1, "event", "-1 events"},
	} {
		if got := Count(c.n, c.noun); got != c.want {
			t.Errorf("Count(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
	if got := Count(uint64(1), "node"); got != "1 node" {
		t.Errorf("Count(uint64(1), node) = %q", got)
	}
	if got := Form(1, "was", "were") + " " + Form(2, "was", "were"); got != "was were" {
		t.Errorf("Form = %q", got)
	}
}
