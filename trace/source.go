package trace

import "embed"

// Source is the Go source of this package and of every package below it,
// test files included: the event model and the wire encoding a node
// process shares with dmx. See runner.Source for why it is embedded.
//
//go:embed *.go */*.go */*/*.go
var Source embed.FS
