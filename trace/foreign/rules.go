package foreign

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/dmxlab/dmx/trace"
)

// Rule gives the events whose text Re matches the kind Kind, with what its
// named groups capture:
//
//	resource     the resource of cs_request, cs_enter, cs_exit and wait,
//	             the election instance of election_start, leader and
//	             step_down, the algorithm instance of a send or receive
//	             (default for the cs kinds and wait: "cs")
//	leader       the host a leader event decided on (required)
//	term         the election's number (election_start, leader, step_down),
//	             or the term a message carries (send, receive: Raft's
//	             messages carry the sender's term)
//	waiting_for  hosts a wait event waits for, separated by commas or
//	             spaces (none: it waits no more)
//	type, msg    a send's or receive's message type and an id that pairs
//	             the send with its receives
//
// A rule is written KIND=REGEX, in Go's regexp syntax ((?<name>...) or
// (?P<name>...) for a named group), and matches anywhere in the text unless
// anchored. The kind step_down is a leader event that names no leader: the
// process stops believing it leads, or knows none (a Raft leader or
// candidate that reverts to follower). One rule is not a regex:
// step_down=<higher-term> says that the program follows Raft's rule
// (section 5.1), a leader stepping down as soon as it receives a message
// of a higher term, whether or not its log says so: the runs' params then
// declare {"step_down": "higher-term"} for check split-brain.
type Rule struct {
	Kind trace.Kind
	Re   *regexp.Regexp // nil for step_down=<higher-term>
	From string         // where it was written: "rules.txt:3", "--rule"
	// HigherTerm: the rule step_down=<higher-term>.
	HigherTerm bool
}

// KindStepDown is the kind of rule that makes a leader event naming no
// leader.
const KindStepDown trace.Kind = "step_down"

// HigherTerm is the rule step_down=<higher-term>.
const HigherTerm = "<higher-term>"

// ruleGroups are the kinds a rule may give and the named groups each may
// have.
var ruleGroups = map[trace.Kind][]string{
	trace.KindCSRequest:     {"resource"},
	trace.KindCSEnter:       {"resource"},
	trace.KindCSExit:        {"resource"},
	trace.KindWait:          {"resource", "waiting_for"},
	trace.KindElectionStart: {"term", "resource"},
	trace.KindLeader:        {"leader", "term", "resource"},
	KindStepDown:            {"term", "resource"},
	trace.KindCrash:         {},
	trace.KindRecover:       {},
	trace.KindSend:          {"type", "msg", "resource", "term"},
	trace.KindReceive:       {"type", "msg", "resource", "term"},
}

// RuleKinds lists the kinds a rule may give, for help texts.
func RuleKinds() []string {
	var out []string
	for k := range ruleGroups {
		out = append(out, string(k))
	}
	slices.Sort(out)
	return out
}

// ParseRule reads one rule, KIND=REGEX; from says where it was written,
// for errors.
func ParseRule(s, from string) (Rule, error) {
	kind, expr, ok := strings.Cut(s, "=")
	kind, expr = strings.TrimSpace(kind), strings.TrimSpace(expr)
	if !ok || kind == "" || expr == "" {
		return Rule{}, fmt.Errorf("%s: rule %s: want KIND=REGEX", from, short(s))
	}
	groups, known := ruleGroups[trace.Kind(kind)]
	if !known {
		return Rule{}, fmt.Errorf("%s: rule %s: no kind %q (a rule gives one of %s)", from, short(s), kind, strings.Join(RuleKinds(), ", "))
	}
	if trace.Kind(kind) == KindStepDown && expr == HigherTerm {
		return Rule{Kind: KindStepDown, From: from, HigherTerm: true}, nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return Rule{}, fmt.Errorf("%s: rule %s: %w", from, short(s), unwrapSyntax(err))
	}
	has := map[string]bool{}
	for _, name := range re.SubexpNames() {
		if name == "" {
			continue
		}
		if !slices.Contains(groups, name) {
			return Rule{}, fmt.Errorf("%s: rule %s: a %s rule has no group %q (it may have %s)", from, short(s), kind, name, groupList(groups))
		}
		has[name] = true
	}
	if kind == string(trace.KindLeader) && !has["leader"] {
		return Rule{}, fmt.Errorf("%s: rule %s: a leader rule needs a (?<leader>...) group naming the host decided on", from, short(s))
	}
	return Rule{Kind: trace.Kind(kind), Re: re, From: from}, nil
}

func groupList(groups []string) string {
	if len(groups) == 0 {
		return "none"
	}
	return strings.Join(groups, ", ")
}

// ParseRules reads a rules file: one rule a line, KIND=REGEX; blank lines
// and lines starting with # are skipped.
func ParseRules(name string, data []byte) ([]Rule, error) {
	var rules []Rule
	sc := bufio.NewScanner(bytes.NewReader(bytes.TrimPrefix(data, []byte(BOM))))
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		r, err := ParseRule(s, fmt.Sprintf("%s:%d", name, line))
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return rules, nil
}

//go:embed dmx.rules
var dmxRules []byte

// DMXRules returns the rules that read back the text dmx export writes for
// dmx's own events (see Text): kinds, resources, leaders, terms, waiting-
// for sets, message types and ids.
func DMXRules() []Rule {
	rules, err := ParseRules("dmx.rules", dmxRules)
	if err != nil {
		panic(err) // the embedded file is tested
	}
	return rules
}

// match returns the first rule that matches text, and what its named
// groups captured (only the groups that took part in the match).
func match(rules []Rule, text string) (*Rule, map[string]string) {
	for i := range rules {
		r := &rules[i]
		if r.Re == nil {
			continue // a rule that matches no text (step_down=<higher-term>)
		}
		m := r.Re.FindStringSubmatchIndex(text)
		if m == nil {
			continue
		}
		groups := map[string]string{}
		for g, name := range r.Re.SubexpNames() {
			if name != "" && m[2*g] >= 0 {
				groups[name] = text[m[2*g]:m[2*g+1]]
			}
		}
		return r, groups
	}
	return nil, nil
}
