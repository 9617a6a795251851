package registry_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/algo/registry"
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
