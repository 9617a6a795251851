package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/runner/registry"
)

// TestListAlgorithm: dmx list ALGO shows one algorithm in full (it was an
// unknown command), in table and JSON form; an unknown name is a usage
// error naming the algorithms.
func TestListAlgorithm(t *testing.T) {
	for _, name := range registry.Names() {
		code, out, errs := dmx(t, "list", name)
		if code != 0 || !strings.HasPrefix(out, name+" (") || !strings.Contains(out, "parameters") || !strings.Contains(out, "dmx sim "+name) {
			t.Errorf("list %s: exit %d\n%s%s", name, code, out, errs)
		}
		code, out, errs = dmx(t, "list", name, "--format", "json")
		var e struct {
			Name string `json:"name"`
			Doc  string `json:"doc"`
		}
		if err := json.Unmarshal([]byte(out), &e); code != 0 || err != nil || e.Name != name || e.Doc == "" {
			t.Errorf("list %s --format json: exit %d, %v\n%s%s", name, code, err, out, errs)
		}
	}
	code, out, errs := dmx(t, "list", "ricart")
	if code != exitUsage || out != "" || !strings.Contains(errs, `unknown algorithm "ricart"`) || !strings.Contains(errs, "ricart-agrawala") {
		t.Errorf("list ricart: exit %d\n%s%s", code, out, errs)
	}
}
