package analyze

import (
	"regexp"
	"strconv"

	"github.com/dmxlab/dmx/trace"
)

// namer writes the processes of a run by the names their trace gives them
// (an imported log's hosts): checks write "P3" and "P3#7", and a finding
// on a log whose hosts are n1, n2, n3 should say what the log says, "n3"
// and "n3#7". A process without a name, or whose name another process
// also has, stays P<k>. A nil namer changes nothing.
type namer struct{ names []string }

func newNamer(names []string) *namer {
	if len(names) == 0 {
		return nil
	}
	count := make(map[string]int)
	for _, n := range names {
		count[n]++
	}
	out := make([]string, len(names))
	any := false
	for p, n := range names {
		if n != "" && count[n] == 1 {
			out[p], any = n, true
		}
	}
	if !any {
		return nil
	}
	return &namer{out}
}

// procToken is a process as checks write it: P<k>, alone or in P<k>#<seq>.
var procToken = regexp.MustCompile(`\bP([0-9]+)\b`)

// name returns the name of process p.
func (n *namer) name(p int) string {
	if n != nil && p >= 0 && p < len(n.names) && n.names[p] != "" {
		return n.names[p]
	}
	return "P" + strconv.Itoa(p)
}

// ref writes an event reference with its process's name.
func (n *namer) ref(r trace.Ref) string {
	return n.name(r.Proc) + "#" + strconv.FormatInt(r.Seq, 10)
}

// text rewrites the processes named in s.
func (n *namer) text(s string) string {
	if n == nil || s == "" {
		return s
	}
	return procToken.ReplaceAllStringFunc(s, func(tok string) string {
		p, err := strconv.Atoi(tok[1:])
		if err != nil {
			return tok
		}
		return n.name(p)
	})
}
