package golden

import "testing"

func TestFirstDiff(t *testing.T) {
	for _, c := range []struct{ got, want, say string }{
		{"a\nb\n", "a\nc\n", `line 2: the test made "b", the file has "c"`},
		{"a\n", "a", `line 2: the test made "", the file has no more lines`},
		{"a", "a\nb", `line 2: the test made no more lines, the file has "b"`},
	} {
		if got := firstDiff([]byte(c.got), []byte(c.want)); got != c.say {
			t.Errorf("firstDiff(%q, %q) = %s, want %s", c.got, c.want, got, c.say)
		}
	}
}
