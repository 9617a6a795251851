package analyze

import (
	"strings"
	"testing"
)

func names(cs []*Check) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return strings.Join(out, ",")
}

func TestFor(t *testing.T) {
	for _, c := range []struct {
		props []string
		want  string // the checks, or the error
	}{
		{nil, "clocks"},
		{[]string{"liveness", "mutex-causal"}, "clocks,mutex-causal,liveness"},
		{[]string{"clocks", "total-order"}, "clocks,total-order"},
		{[]string{"mutex-casual"}, `no check named "mutex-casual" (the checks are: ` + strings.Join(Names(), ", ") + `)`},
	} {
		got, err := For(c.props)
		s := names(got)
		if err != nil {
			s = err.Error()
		}
		if s != c.want {
			t.Errorf("For(%q) = %s, want %s", c.props, s, c.want)
		}
	}
}

func TestSelect(t *testing.T) {
	got, err := Select([]string{"liveness", "clocks"})
	if err != nil || names(got) != "liveness,clocks" {
		t.Fatalf("Select: %s %v, want liveness,clocks in the order given", names(got), err)
	}
	if _, err := Select([]string{"clocks", "speed"}); err == nil || !strings.Contains(err.Error(), `"speed"`) {
		t.Fatalf("Select of an unknown check: %v", err)
	}
}
