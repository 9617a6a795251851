package netns

import (
	"fmt"
	"testing"
)

// BenchmarkNetwork: making a run's namespaces, bridge and veth pairs for
// n nodes, and removing them (what --net netns adds to a run's start and
// end, beside the nodes' own start).
func BenchmarkNetwork(b *testing.B) {
	if err := Probe(); err != nil {
		b.Skipf("skipped: %v", err)
	}
	for _, n := range []int{5, 30} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for b.Loop() {
				nw, err := open(n, nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := nw.close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
