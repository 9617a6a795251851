package nemesis

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/algo"
)

// Kind is a kind of fault a nemesis injects: what it does, apart from
// when (Item.Every) and for how long (Item.For).
type Kind struct {
	Name string
	// Doc says what one fault of the kind does, for help.
	Doc string
	// Proc: the kind hits one process (who= applies).
	Proc bool
	// Window: the kind lasts a while (for= applies).
	Window bool
	// Groups: the kind cuts links, which needs two processes at least.
	Groups bool
	// Rate: the kind has a probability (rate= applies), and its default.
	Rate float64
	// By: the kind has an amount (by= applies).
	By bool
	// Parts: who= may name a part (leader, coordinator, token, cs), not
	// only a process.
	Parts bool
}

// Kinds are the kinds a nemesis knows, in the order Default lists them.
// A kind is a line here and a case in draw.
var Kinds = []Kind{
	{Name: "crash", Doc: "a process crashes for good (crash:WHO@T)", Proc: true, Parts: true},
	{Name: "restart", Doc: "a process crashes and recovers after for= (crash:WHO@T, recover:WHO@+FOR); amnesia: without what it persisted", Proc: true, Window: true, Parts: true},
	{Name: "pause", Doc: "a process stops for for= and resumes (pause:WHO@T-T+FOR)", Proc: true, Window: true, Parts: true},
	{Name: "partition", Doc: "the processes split into two random groups for for= (partition:SET@...)", Window: true, Groups: true},
	{Name: "isolate", Doc: "one process cut off both ways for for= (isolate:WHO@...)", Proc: true, Window: true, Groups: true, Parts: true},
	{Name: "cut", Doc: "one way: some random processes stop hearing others for for= (cut:from=SET:to=SET@...)", Window: true, Groups: true},
	{Name: "loss", Doc: "each message is lost with probability rate= (default 20%) for for= (loss:RATE@...)", Window: true, Rate: 0.2},
	{Name: "duplicate", Doc: "each message arrives twice with probability rate= (default 10%) for for=", Window: true, Rate: 0.1},
	{Name: "delay", Doc: "each message takes by= longer for for= (delay:DIST@...)", Window: true, By: true},
	{Name: "reorder", Doc: "messages overtake each other (a jitter of by=, default 0-5ms) for for=", Window: true, By: true},
	{Name: "skew", Doc: "a process's wall clock reads by= (random sign) off from T on (skew:P:OFFSET@T)", Proc: true, By: true},
}

// Lookup returns the kind named name, or nil.
func Lookup(name string) *Kind {
	for i := range Kinds {
		if Kinds[i].Name == name {
			return &Kinds[i]
		}
	}
	return nil
}

func kindNames() string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = k.Name
	}
	return strings.Join(names, ", ")
}

// Item is one kind of a Spec with its options. A zero option takes its
// default (see Defaults).
type Item struct {
	Kind  string
	Every time.Duration // mean gap between two faults of the kind (exponential)
	For   runner.Dist   // how long each lasts
	Who   string        // "" (any process, drawn), a process ("2") or a part (leader, coordinator, token, cs)
	Rate  float64       // loss, duplicate
	By    runner.Dist   // delay, reorder, skew
	Max   int           // at most this many per run; 0: no bound but maxPerItem
	// Amnesia: a restart recovers without what the process persisted.
	Amnesia bool
}

// Spec is a nemesis: the kinds of faults to inject and how. Random is the
// spec "random": every kind that applies to the run (Resolve).
type Spec struct {
	Random bool
	Items  []Item
}

// maxPerItem bounds the faults one item draws in one run, whatever its
// every=: a schedule of thousands of faults is a mistake, not a test.
const maxPerItem = 100

// Parse reads a nemesis spec ("random", or items such as
// "pause:every=1s:for=100ms-500ms,partition"). Its errors name the item
// and the option that is wrong.
func Parse(s string) (Spec, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Spec{}, errors.New("empty nemesis: want random, or kinds such as pause,partition:for=200ms")
	}
	if s == "random" {
		return Spec{Random: true}, nil
	}
	var sp Spec
	for _, it := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == ';' }) {
		item, err := parseItem(it)
		if err != nil {
			return Spec{}, fmt.Errorf("nemesis %q: %w", it, err)
		}
		if slices.ContainsFunc(sp.Items, func(x Item) bool { return x.Kind == item.Kind }) {
			return Spec{}, fmt.Errorf("nemesis %q: %s named twice", it, item.Kind)
		}
		sp.Items = append(sp.Items, item)
	}
	return sp, nil
}

func parseItem(s string) (Item, error) {
	fields := strings.Split(s, ":")
	k := Lookup(fields[0])
	if k == nil {
		if fields[0] == "random" {
			return Item{}, errors.New("random stands alone: it is every kind (name kinds instead to choose some)")
		}
		return Item{}, fmt.Errorf("unknown kind %q (known: %s, or random for all)", fields[0], kindNames())
	}
	it := Item{Kind: k.Name}
	for _, opt := range fields[1:] {
		name, v, hasValue := strings.Cut(opt, "=")
		if !hasValue && name != "amnesia" || hasValue && v == "" {
			return it, fmt.Errorf("option %q: want NAME=VALUE (every=, for=, who=, rate=, by=, max=) or amnesia", opt)
		}
		refuse := func(what string) error { return fmt.Errorf("option %q: a %s fault has no %s", opt, k.Name, what) }
		var err error
		switch name {
		case "every":
			it.Every, err = time.ParseDuration(v)
			if err != nil || it.Every <= 0 {
				return it, fmt.Errorf("every=%s: want a positive duration, the mean time between two %s faults", v, k.Name)
			}
		case "for":
			if !k.Window {
				return it, refuse("duration (for=)")
			}
			if it.For, err = runner.ParseDist(v); err != nil {
				return it, fmt.Errorf("for=%s: %w", v, err)
			}
			if it.For.Max <= 0 && it.For.Mean <= 0 {
				return it, fmt.Errorf("for=%s: a fault lasts more than 0", v)
			}
		case "who":
			if !k.Proc {
				return it, refuse("target process (who=)")
			}
			if err := checkWho(v, k); err != nil {
				return it, err
			}
			it.Who = strings.TrimPrefix(strings.TrimPrefix(v, "P"), "p")
		case "rate":
			if k.Rate == 0 {
				return it, refuse("probability (rate=)")
			}
			if it.Rate, err = runner.ParseRate(v); err != nil {
				return it, fmt.Errorf("rate=%s: %w", v, err)
			}
		case "by":
			if !k.By {
				return it, refuse("amount (by=)")
			}
			if it.By, err = runner.ParseDist(v); err != nil {
				return it, fmt.Errorf("by=%s: %w", v, err)
			}
		case "max":
			it.Max, err = strconv.Atoi(v)
			if err != nil || it.Max < 1 || it.Max > maxPerItem {
				return it, fmt.Errorf("max=%s: want a count from 1 to %d", v, maxPerItem)
			}
		case "amnesia":
			if k.Name != "restart" {
				return it, refuse("recovery to forget in (amnesia is restart's)")
			}
			it.Amnesia = true
		default:
			return it, fmt.Errorf("unknown option %q (known: every, for, who, rate, by, max, amnesia)", name)
		}
	}
	return it, nil
}

func checkWho(v string, k *Kind) error {
	switch v {
	case "any":
		return nil
	case "leader", "coordinator", "token", "cs":
		if !k.Parts {
			return fmt.Errorf("who=%s: a %s fault names a process (a number), not a part", v, k.Name)
		}
		return nil
	}
	p, err := strconv.Atoi(strings.TrimPrefix(strings.TrimPrefix(v, "P"), "p"))
	if err != nil || p < 0 {
		return fmt.Errorf("who=%s: want any, a process (2 or P2) or a part (leader, coordinator, token, cs)", v)
	}
	return nil
}

// String prints the spec as Parse reads it, options in a fixed order and
// only those given.
func (s Spec) String() string {
	if s.Random {
		return "random"
	}
	parts := make([]string, len(s.Items))
	for i, it := range s.Items {
		parts[i] = it.String()
	}
	return strings.Join(parts, ",")
}

// String prints the item as Parse reads it.
func (it Item) String() string {
	var b strings.Builder
	b.WriteString(it.Kind)
	if it.Every > 0 {
		b.WriteString(":every=" + it.Every.String())
	}
	if it.For != (runner.Dist{}) {
		b.WriteString(":for=" + it.For.String())
	}
	if it.Who != "" {
		b.WriteString(":who=" + it.Who)
	}
	if it.Rate > 0 {
		b.WriteString(":rate=" + strconv.FormatFloat(it.Rate*100, 'f', -1, 64) + "%")
	}
	if it.By != (runner.Dist{}) {
		b.WriteString(":by=" + it.By.String())
	}
	if it.Max > 0 {
		b.WriteString(":max=" + strconv.Itoa(it.Max))
	}
	if it.Amnesia {
		b.WriteString(":amnesia")
	}
	return b.String()
}

// Horizon is the span of a plan's run over which faults are drawn: an
// election run's duration, else the run's estimated span (its workload's
// think, hold and waiting, from the algorithm's costs), at least 10ms.
func Horizon(p runner.Plan) time.Duration {
	if p.Spec != nil && p.Spec.Kind == algo.Election {
		return p.WithDefaults().Duration
	}
	return max(p.Estimate().Span, 10*time.Millisecond)
}

// Resolve returns the spec's items for plan p, with every default filled
// in (see Defaults): for "random", every kind that applies to p (those
// that cut links need two processes).
func (s Spec) Resolve(p runner.Plan, horizon time.Duration) []Item {
	items := slices.Clone(s.Items)
	if s.Random {
		items = nil
		for _, k := range Kinds {
			if k.Groups && p.N < 2 {
				continue
			}
			items = append(items, Item{Kind: k.Name})
		}
	}
	for i := range items {
		items[i] = items[i].withDefaults(horizon, len(items))
	}
	return items
}

// withDefaults fills in an item's defaults for a run of the horizon in a
// spec of n items: every=horizon x n (so that a run gets one fault on
// average, of any of the kinds), for= a twentieth to a quarter of the
// horizon, by= a hundredth to a twentieth (reorder: its own jitter), the
// kind's rate.
func (it Item) withDefaults(horizon time.Duration, n int) Item {
	k := Lookup(it.Kind)
	if it.Every == 0 {
		it.Every = horizon * time.Duration(max(n, 1))
	}
	if it.For == (runner.Dist{}) && k.Window {
		it.For = runner.Dist{Min: round(horizon / 20), Max: round(horizon / 4)}
	}
	if it.Rate == 0 {
		it.Rate = k.Rate
	}
	if it.By == (runner.Dist{}) && k.By && k.Name != "reorder" {
		it.By = runner.Dist{Min: round(horizon / 100), Max: round(horizon / 20)}
	}
	if it.Max == 0 {
		it.Max = maxPerItem
	}
	return it
}

// grain is the resolution of drawn times: schedules print short
// (crash:2@31.4ms, not 31.415926ms).
const grain = 100 * time.Microsecond

func round(d time.Duration) time.Duration {
	return max(d.Round(grain), grain)
}

// stream is the nemesis's random stream of a seed (runner's streams are
// 1, 2, 1<<20 + i and 2<<20 + i): a schedule does not shift the draws of
// the run it is given to.
const stream = 3 << 20

// Draw returns the fault schedule of seed for plan p (its N and
// algorithm) over horizon: for each item in turn, faults at the times of
// a Poisson process of mean gap Every, up to Max, each drawn in full
// (process, groups, length, amount) before the next. The same seed, plan
// and spec give the same schedule; the text of each fault is what the run
// records in runs.faults.
func (s Spec) Draw(p runner.Plan, horizon time.Duration, seed uint64) ([]runner.Fault, error) {
	r := rand.New(rand.NewPCG(seed, stream))
	var out []string
	for _, it := range s.Resolve(p, horizon) {
		t := time.Duration(0)
		for n := 0; n < it.Max; n++ {
			t += time.Duration(r.ExpFloat64() * float64(it.Every))
			if t >= horizon {
				break
			}
			out = append(out, draw(r, it, p.N, round(t))...)
		}
	}
	faults, err := runner.ParseFaults(strings.Join(out, ","))
	if err != nil {
		// A bug of draw: what it writes must parse.
		return nil, fmt.Errorf("nemesis %s drew %v: %w", s, out, err)
	}
	return faults, nil
}

// draw writes the faults of one occurrence of it at time at.
func draw(r *rand.Rand, it Item, n int, at time.Duration) []string {
	who := func() string {
		if it.Who != "" && it.Who != "any" {
			return it.Who
		}
		return strconv.Itoa(r.IntN(n))
	}
	window := func() string {
		d := round(it.For.Draw(r))
		return fmt.Sprintf("@%v-%v", at, at+d)
	}
	switch it.Kind {
	case "crash":
		return []string{fmt.Sprintf("crash:%s@%v", who(), at)}
	case "restart":
		w := who()
		rec := "recover:" + w
		if it.Amnesia {
			rec += ":amnesia"
		}
		return []string{fmt.Sprintf("crash:%s@%v", w, at), fmt.Sprintf("%s@+%v", rec, round(it.For.Draw(r)))}
	case "pause":
		return []string{"pause:" + who() + window()}
	case "partition":
		return []string{"partition:" + set(split(r, n)) + window()}
	case "isolate":
		return []string{"isolate:" + who() + window()}
	case "cut":
		from := split(r, n)
		var rest []int
		for p := range n {
			if !slices.Contains(from, p) {
				rest = append(rest, p)
			}
		}
		to := subset(r, rest)
		return []string{"cut:from=" + set(from) + ":to=" + set(to) + window()}
	case "loss", "duplicate":
		return []string{it.Kind + ":" + strconv.FormatFloat(it.Rate*100, 'f', -1, 64) + "%" + window()}
	case "delay":
		return []string{"delay:" + it.By.String() + window()}
	case "reorder":
		if it.By == (runner.Dist{}) {
			return []string{"reorder" + window()}
		}
		return []string{"reorder:" + it.By.String() + window()}
	case "skew":
		off := round(it.By.Draw(r))
		sign := "+"
		if r.IntN(2) == 0 {
			sign = "-"
		}
		return []string{fmt.Sprintf("skew:%s:%s%v@%v", who(), sign, off, at)}
	}
	panic("nemesis: kind without a draw: " + it.Kind)
}

// split returns a random nonempty proper subset of 0..n-1 (n >= 2).
func split(r *rand.Rand, n int) []int {
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	for {
		s := subset(r, all)
		if len(s) < n {
			return s
		}
	}
}

// subset returns a random nonempty subset of procs (each in with
// probability 1/2, drawn again while empty).
func subset(r *rand.Rand, procs []int) []int {
	for {
		var s []int
		for _, p := range procs {
			if r.IntN(2) == 1 {
				s = append(s, p)
			}
		}
		if len(s) > 0 {
			return s
		}
	}
}

func set(s []int) string {
	parts := make([]string, len(s))
	for i, p := range s {
		parts[i] = strconv.Itoa(p)
	}
	return strings.Join(parts, "+")
}

// Check draws the schedules of a few seeds for p and validates p with
// each: a nemesis that can never apply to p (who=leader for an algorithm
// that elects none, who=7 in a group of 5, a cut in a group of one) is
// refused before a sweep starts, naming the fault.
func (s Spec) Check(p runner.Plan, horizon time.Duration) error {
	items := s.Resolve(p, horizon)
	if len(items) == 0 {
		return errors.New("no fault kind applies to a run of one process")
	}
	for _, it := range items {
		if Lookup(it.Kind).Groups && p.N < 2 {
			return fmt.Errorf("nemesis %s: cuts links, and a run of one process has none", it.Kind)
		}
		if it.Who != "" && it.Who != "any" {
			if pr, err := strconv.Atoi(it.Who); err == nil && pr >= p.N {
				return fmt.Errorf("nemesis %s: who=%s: process %d does not exist (there are %d: 0..%d)", it, it.Who, pr, p.N, p.N-1)
			}
		}
		// One fault of the item, validated with p's own faults.
		one := Spec{Items: []Item{it}}
		one.Items[0].Every = horizon / 4
		for seed := uint64(1); seed <= 8; seed++ {
			fs, err := one.Draw(p, horizon, seed)
			if err != nil {
				return err
			}
			q := p
			q.Faults = append(slices.Clone(p.Faults), fs...)
			if err := q.Validate(); err != nil {
				return fmt.Errorf("nemesis %s: %w", it.Kind, err)
			}
		}
	}
	return nil
}
