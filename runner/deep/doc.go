// Package deep copies and fingerprints algorithm state machines, which
// dmx explore needs: to branch a run at a state it copies every machine
// (Copy), and to recognize a state it has seen it hashes them (Hasher.Value).
//
// Both walk a value with reflection, unexported fields included, so that
// no algorithm has to write (and keep in step with its fields) a Clone or a
// Hash method: a field added to a machine is copied and hashed without
// further ado. Copy keeps aliasing (two pointers to one value point to one
// copy) and refuses what it cannot copy (a func or a channel: a machine
// holds neither). Hasher.Value is canonical: maps are hashed in an order
// of their own, independent of Go's iteration order, and pointers by what
// they point to, so equal states hash equally whatever their addresses.
//
// Fingerprints are 128 bits: two 64-bit lanes mixed independently. Among a
// few million states the chance that two different ones collide is below
// 10^-24; explore counts on it as model checkers such as TLC count on their
// 64-bit fingerprints.
package deep
