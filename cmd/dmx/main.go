// Command dmx runs distributed mutual-exclusion and leader-election
// algorithms as real processes, records causally stamped traces into SQLite,
// and checks, queries and measures them. Run `dmx --help`.
package main

import (
	"os"

	// Before go-graphviz's initialization: see the packages.
	_ "github.com/dmxlab/dmx/cmd/dmx/early"
	_ "github.com/dmxlab/dmx/render/gvcache"
)

func main() { os.Exit(Do(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
