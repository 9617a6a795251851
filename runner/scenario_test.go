package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScenarioProcNamedTwice: "1" and "P1" are the same process; a file
// that overrides it under both names is refused, not resolved by map order.
func TestScenarioProcNamedTwice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dup.json")
	os.WriteFile(path, []byte(`{"nodes": 3, "procs": {"1": {"entries": 0}, "P1": {"entries": 5}}}`), 0o644)
	sc, err := LoadScenario(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		_, err := sc.procs()
		if err == nil || !strings.Contains(err.Error(), "process 1 is named twice") {
			t.Fatalf("procs: %v, want process 1 is named twice", err)
		}
	}
	if m, err := (&Scenario{Procs: map[string]ProcWorkload{"0": {}, "P1": {}, "p2": {}}}).procs(); err != nil || len(m) != 3 {
		t.Fatalf("distinct processes: %v, %v", m, err)
	}
}
