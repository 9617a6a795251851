package runner

import "embed"

// Source is the Go source of this package and of every package below it
// (the drivers, the algorithms), test files included. It is embedded so
// that a node program can show it was built from the same code as the dmx
// that starts it (runner/udp.BuildIdentity): without it two builds of a
// changed tree look alike where the build carries no version control
// stamp (go build -buildvcs=false, go run, go test, a modified tree).
//
//go:embed *.go */*.go */*/*.go
var Source embed.FS
