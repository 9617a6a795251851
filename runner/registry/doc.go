// Package registry lists every algorithm dmx can run. A new algorithm is a
// package under runner/algo with its Spec, and one line in All. Nothing
// below cmd/dmx and the tests imports this package: the runtime (package
// runner) is handed the Spec it runs, so that the algorithms' own tests can
// drive them through the runtime without an import cycle.
package registry
