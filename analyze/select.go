package analyze

// For returns the checks named by properties (an algorithm's claims, as
// dmx list shows them), always with clocks first, in the order of All.
// Unknown names are skipped.
func For(properties []string) []*Check {
	want := map[string]bool{Clocks.Name: true}
	for _, p := range properties {
		want[p] = true
	}
	var out []*Check
	for _, c := range All {
		if want[c.Name] {
			out = append(out, c)
		}
	}
	return out
}
