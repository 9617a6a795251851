package analyze

import (
	"fmt"
	"slices"
	"sort"

	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/plural"
)

// TotalOrder checks Lamport's totally-ordered multicast (seed 002): every
// process delivers the same messages in the same order.
var TotalOrder = &Check{
	Name: "total-order",
	Doc: `every process delivers the same multicasts in the same order

Seed 002, totally-ordered multicast: "all messages are delivered to every
receiver in the same order". A multicast is named by its deliver events'
detail (origin "from", its timestamp "stamp" and "id"). Three findings:
two processes that deliver two multicasts in opposite orders (the finding
names the four deliver events); a process that delivers one multicast
twice; and, in a complete run, a multicast that some process of its group
delivered and another, which did not crash, never did. The group of a
multicast is who it was sent to: its origin and the receivers of the
origin's sends whose detail carries its stamp and id (as tomcast's
messages do); a trace that shows no such send sent it to every process. An
incomplete run may still have deliveries in flight: the last finding then
makes the verdict unknown instead.`,
	Requires: []string{},
	New:      func(Config) Checker { return &totalOrder{} },
}

type mcastKey struct {
	from  int
	stamp uint64
	id    int
}

// short names the multicast in a few characters, for a picture.
func (k mcastKey) short() string { return fmt.Sprintf("P%d:%d", k.from, k.stamp) }

func (k mcastKey) String() string {
	return fmt.Sprintf("P%d's multicast (stamp %d, id %d)", k.from, k.stamp, k.id)
}

type delivery struct {
	key mcastKey
	ev  trace.Ref
}

type totalOrder struct {
	seqs    map[int][]delivery // per process, in delivery order
	crashed map[int]bool
	bad     findings
	groups  map[mcastKey][]int // the receivers of sends that carry a multicast's stamp and id
	order   []mcastKey         // the keys of groups, oldest first
}

// maxGroups bounds the groups kept: the sends that carry a stamp and an id
// are those of any algorithm (a Ricart-Agrawala request does), so the
// oldest are forgotten; a multicast is delivered long before 65536 others
// are sent. A multicast whose group was forgotten goes to everybody.
const maxGroups = 1 << 16

// sent records the receiver of a send that may be a copy of a multicast.
func (c *totalOrder) sent(ev *trace.Event) {
	if len(ev.Detail) == 0 || ev.Peer < 0 {
		return
	}
	m, err := ev.Message()
	if err != nil || m.Stamp == 0 && m.ID == 0 {
		return
	}
	k := mcastKey{ev.Proc, m.Stamp, m.ID}
	g, ok := c.groups[k]
	if !ok {
		if c.groups == nil {
			c.groups = make(map[mcastKey][]int)
		}
		if len(c.order) >= maxGroups {
			delete(c.groups, c.order[0])
			c.order = c.order[1:]
		}
		c.order = append(c.order, k)
	}
	if !slices.Contains(g, ev.Peer) {
		c.groups[k] = append(g, ev.Peer)
	}
}

// members reports whether p is in the group of multicast k.
func (c *totalOrder) member(k mcastKey, p int) bool {
	g, ok := c.groups[k]
	return !ok || p == k.from || slices.Contains(g, p)
}

func (c *totalOrder) Event(ev *trace.Event, _ *HB) {
	switch ev.Kind {
	case trace.KindDeliver:
		d, _ := ev.Delivery() // Walk refused a trace whose deliver events name no multicast
		if c.seqs == nil {
			c.seqs = map[int][]delivery{}
		}
		c.seqs[ev.Proc] = append(c.seqs[ev.Proc], delivery{mcastKey{d.From, d.Stamp, d.ID}, ev.Ref()})
	case trace.KindSend:
		c.sent(ev)
	case trace.KindCrash:
		if c.crashed == nil {
			c.crashed = map[int]bool{}
		}
		c.crashed[ev.Proc] = true
	}
}

func (c *totalOrder) Finish(end End) Result {
	if len(c.seqs) == 0 {
		return notApplicable("no deliver events")
	}
	procs := make([]int, 0, len(c.seqs))
	for p := range c.seqs {
		procs = append(procs, p)
	}
	sort.Ints(procs)
	f := c.bad
	pos := map[int]map[mcastKey]int{}
	all := map[mcastKey]delivery{} // first delivery anywhere
	for _, p := range procs {
		pos[p] = map[mcastKey]int{}
		for i, d := range c.seqs[p] {
			if j, dup := pos[p][d.key]; dup {
				f.add(fmt.Sprintf("P%d delivered %s twice: %s and %s", p, d.key, c.seqs[p][j].ev, d.ev), c.seqs[p][j].ev, d.ev)
				continue
			}
			pos[p][d.key] = i
			if _, ok := all[d.key]; !ok {
				all[d.key] = d
			}
		}
	}
	// Same order: for each pair, the common multicasts in p's order must
	// have increasing positions at q. One finding per pair: the first
	// inversion.
	for a, p := range procs {
		for _, q := range procs[a+1:] {
			last := -1
			var lastD delivery
			for i, d := range c.seqs[p] {
				j, ok := pos[q][d.key]
				if !ok || pos[p][d.key] != i { // not at q, or p's second delivery of it
					continue
				}
				if j < last {
					qa, qb := c.seqs[q][j], c.seqs[q][last]
					parts := []Part{
						{Role: RoleSame, Events: []trace.Ref{lastD.ev, qb.ev}, Label: lastD.key.short()},
						{Role: RoleSame, Events: []trace.Ref{d.ev, qa.ev}, Label: d.key.short()},
					}
					f.addParts(fmt.Sprintf("P%d delivered %s (%s) before %s (%s), but P%d delivered them the other way round (%s, then %s)",
						p, lastD.key, lastD.ev, d.key, d.ev, q, qa.ev, qb.ev), parts, lastD.ev, d.ev, qa.ev, qb.ev)
					break
				}
				last, lastD = j, d
			}
		}
	}
	// Every multicast at every member of its group (a process that crashed
	// is excused).
	missing := 0
	n := max(end.Procs, len(procs))
	keys := make([]mcastKey, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].from != keys[j].from {
			return keys[i].from < keys[j].from
		}
		return keys[i].stamp < keys[j].stamp || keys[i].stamp == keys[j].stamp && keys[i].id < keys[j].id
	})
	var missingFindings findings
	for _, k := range keys {
		for p := range n {
			if c.crashed[p] || !c.member(k, p) {
				continue
			}
			if _, ok := pos[p][k]; !ok {
				missing++
				missingFindings.add(fmt.Sprintf("P%d never delivered %s, which P%d delivered at %s", p, k, all[k].ev.Proc, all[k].ev), all[k].ev)
			}
		}
	}
	note := fmt.Sprintf("%s, %s at %s", plural.Count(len(all), "multicast"), plural.Count(countDeliveries(c.seqs), "delivery"), plural.Count(len(procs), "process"))
	if missing > 0 && !end.Complete {
		r := f.result(note)
		if r.Verdict == OK {
			return Result{Verdict: Unknown, Note: fmt.Sprintf("the run is incomplete and %s %s missing; %s", plural.Count(missing, "delivery"), plural.Form(missing, "is", "are"), note)}
		}
		return r
	}
	for _, m := range missingFindings.list {
		f.add(m.Message, m.Events...)
	}
	f.more += missingFindings.more
	return f.result(note)
}

func countDeliveries(m map[int][]delivery) int {
	n := 0
	for _, s := range m {
		n += len(s)
	}
	return n
}
