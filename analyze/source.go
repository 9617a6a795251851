package analyze

import "embed"

// Source is the Go source of this package and of every package below it,
// test files included: the runtime links analyze/theory and the check
// policy. See runner.Source for why it is embedded.
//
//go:embed *.go */*.go */*/*.go
var Source embed.FS
