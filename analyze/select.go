package analyze

import (
	"fmt"
	"strings"
)

// Claims is what an algorithm promises of its runs, as its Spec says and
// dmx list shows: the properties that hold of them, by check name, and the
// rule of check validity that the leaders it decides obey ("" if it
// decides none).
type Claims struct {
	Algorithm  string
	Properties []string
	Validity   string
}

// Applicable is the one place that decides which checks a run gets and
// how they are held, for every command and test that checks runs (dmx
// check, run and sim, report, explore, list, algotest): for an algorithm
// that makes claims (c not nil), the checks it claims with clocks (For),
// held to its validity rule; for a trace dmx did not record, or of an
// algorithm it does not know (c nil), every check that holds of any trace
// (General), each with its default.
func Applicable(c *Claims) ([]*Check, []Option, error) {
	if c == nil {
		return General(), nil, nil
	}
	checks, err := For(c.Properties)
	if err != nil {
		return nil, nil, fmt.Errorf("%s's properties: %w", c.Algorithm, err)
	}
	var opts []Option
	if c.Validity != "" {
		opts = append(opts, WithValidity(c.Validity))
	}
	return checks, opts, nil
}

// For returns the checks named by properties (an algorithm's claims, as
// dmx list shows them), always with clocks first, in the order of All. A
// name that is no check is an error naming the known ones: a misspelled
// claim must not silently check nothing.
func For(properties []string) ([]*Check, error) {
	named, err := Select(properties)
	if err != nil {
		return nil, err
	}
	want := map[*Check]bool{Clocks: true}
	for _, c := range named {
		want[c] = true
	}
	var out []*Check
	for _, c := range All {
		if want[c] {
			out = append(out, c)
		}
	}
	return out, nil
}

// Select returns the checks called names, in that order (dmx check
// --checks). A name that is no check is an error naming the known ones.
func Select(names []string) ([]*Check, error) {
	out := make([]*Check, 0, len(names))
	for _, name := range names {
		c := Lookup(name)
		if c == nil {
			return nil, fmt.Errorf("no check named %q (the checks are: %s)", name, strings.Join(Names(), ", "))
		}
		out = append(out, c)
	}
	return out, nil
}

// Names returns the names of the checks, in the order of All.
func Names() []string {
	names := make([]string, len(All))
	for i, c := range All {
		names[i] = c.Name
	}
	return names
}

// General returns the checks that hold of any trace that has the events
// they need, in the order of All: every check but those only some
// algorithms promise (Check.Promise). A trace of another program gets
// these.
func General() []*Check {
	var out []*Check
	for _, c := range All {
		if !c.Promise {
			out = append(out, c)
		}
	}
	return out
}
