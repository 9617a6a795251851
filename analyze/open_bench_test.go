package analyze

import (
	"fmt"
	"testing"

	"github.com/dmxlab/dmx/trace"
)

// BenchmarkOpen measures what opening a trace costs with and without the
// integrity check (PRAGMA integrity_check reads the whole file), beside
// BenchmarkCheck's time for checking the same trace:
//
//	go test ./analyze -run XXX -bench 'Open|Check' -benchtime 3x
func BenchmarkOpen(b *testing.B) {
	for _, n := range benchSizes() {
		path, _ := benchTrace(b, n)
		for _, check := range []bool{true, false} {
			b.Run(fmt.Sprintf("events=%d/integrity=%v", n, check), func(b *testing.B) {
				for b.Loop() {
					s, err := trace.OpenWith(path, trace.OpenOptions{NoIntegrityCheck: !check})
					if err != nil {
						b.Fatal(err)
					}
					s.Close()
				}
			})
		}
	}
}
