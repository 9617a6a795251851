package runner

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestDistDrawWidest: the widest range ParseDist accepts is drawn from, not
// a panic.
func TestDistDrawWidest(t *testing.T) {
	d, err := ParseDist("0s-9223372036854775807ns")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 100; i++ {
		if v := d.Draw(r); v < 0 || v > time.Duration(math.MaxInt64) {
			t.Fatalf("drew %v outside %v", v, d)
		}
	}
	if v := (Dist{Min: time.Millisecond, Max: 2 * time.Millisecond}).Draw(r); v < time.Millisecond || v > 2*time.Millisecond {
		t.Fatalf("drew %v outside 1ms-2ms", v)
	}
}
