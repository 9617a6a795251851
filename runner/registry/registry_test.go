package registry_test

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/registry"
)

// TestSpecs: what every algorithm declares is usable as it stands: its
// properties are checks dmx has, and each of its variants builds machines
// (a misspelled parameter would make a test of the variant test nothing).
func TestSpecs(t *testing.T) {
	for _, spec := range registry.All() {
		if _, err := analyze.For(spec.Properties); err != nil {
			t.Errorf("%s: properties: %v", spec.Name, err)
		}
		if spec.Validity != "" && !slices.Contains(analyze.ValidityRules, spec.Validity) {
			t.Errorf("%s: validity rule %q is none of %v", spec.Name, spec.Validity, analyze.ValidityRules)
		}
		if slices.Contains(spec.Properties, "validity") && spec.Validity == "" {
			t.Errorf("%s claims validity but names no rule of it", spec.Name)
		}
		if !strings.HasPrefix(spec.Doc, "Package ") {
			t.Errorf("%s: Doc is not its package documentation: %.40q", spec.Name, spec.Doc)
		}
		if registry.Lookup(spec.Name) != spec {
			t.Errorf("%s: Lookup finds another spec", spec.Name)
		}
		for _, v := range spec.Configurations() {
			for _, n := range []int{1, 2, 5} {
				if _, err := spec.New(algo.Config{N: n, Resource: "cs", Params: v.Params}); err != nil {
					t.Errorf("%s %v N=%d: %v", spec.Name, v.Params, n, err)
				}
			}
		}
	}
}

func TestConfigurations(t *testing.T) {
	spec := &algo.Spec{Variants: []algo.Variant{
		{Params: map[string]string{"a": "1"}},
		{Doc: "the defaults", Flawed: "deadlocks"},
	}}
	got := spec.Configurations()
	if len(got) != 2 || got[0].Flawed != "deadlocks" || got[0].Params != nil || got[1].Params["a"] != "1" {
		t.Fatalf("Configurations: %+v, want the annotated defaults first, then a=1", got)
	}
	if got := (&algo.Spec{}).Configurations(); len(got) != 1 || got[0].Params != nil {
		t.Fatalf("no variants: %+v, want the defaults alone", got)
	}
}

// TestInspectors: every algorithm in every configuration shows its state
// (dmx replay --step prints it), as a JSON object, before and after it has
// started and been asked for the resource.
func TestInspectors(t *testing.T) {
	for _, spec := range registry.All() {
		for _, v := range spec.Configurations() {
			m, err := spec.New(algo.Config{ID: 1, N: 3, Resource: "cs", Params: v.Params, Rand: rand.New(rand.NewPCG(1, 2))})
			if err != nil {
				t.Fatalf("%s %v: %v", spec.Name, v.Params, err)
			}
			in, ok := m.(algo.Inspector)
			if !ok {
				t.Errorf("%s %v: %T does not implement algo.Inspector", spec.Name, v.Params, m)
				continue
			}
			for _, step := range []algo.Input{{Kind: algo.Start}, {Kind: algo.Request, Resource: "cs", Clock: 2}} {
				m.Step(step)
				b, err := json.Marshal(in.State())
				if err != nil || len(b) == 0 || b[0] != '{' {
					t.Errorf("%s %v after %v: State encodes as %s (%v), want a JSON object", spec.Name, v.Params, step.Kind, b, err)
				}
			}
		}
	}
}
