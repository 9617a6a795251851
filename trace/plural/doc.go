// Package plural writes counts the way English says them: "1 event", "2
// events", "1 process", "3 processes", "1 entry". Every count dmx prints
// (tables' captions, notes of checks, statuses of runs, errors) goes
// through it, so that none reads "1 rows".
//
// It is a leaf package under trace, the lowest layer, so that trace,
// analyze, runner and render, which all write notes, statuses and errors
// with counts in them, can use it without importing a layer above their
// own.
package plural
